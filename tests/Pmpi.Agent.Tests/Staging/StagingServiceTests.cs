using System.Security.Cryptography;
using System.Text;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Agent.Hosting;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;
using AgentClient = Pmpi.Rpc.V1.Agent.AgentClient;

namespace Pmpi.Agent.Tests.Staging;

/// <summary>
/// An agent's side of program staging, called over gRPC as a master calls it: which files it lacks, uploads checked
/// against their hash, and launches that run a staged program only when the job's ticket allows it.
/// </summary>
public sealed class StagingServiceTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    private readonly DirectoryInfo _scratch = Directory.CreateTempSubdirectory("pmpi-staging-service-");
    private readonly RpcSecurity _security = RpcSecurity.ForThisProcess();
    private AgentHost? _host;

    private AgentHost Host => _host!;

    private string Store => Path.Combine(_scratch.FullName, "store");

    public async Task InitializeAsync() =>
        _host = await AgentHost.StartAsync(options => { options.Port = 0; options.Security = _security; options.StagingDirectory = Store; }).WaitAsync(Timeout);

    public async Task DisposeAsync()
    {
        if (_host is not null) await _host.DisposeAsync();
        _scratch.Delete(recursive: true);
    }

    /// <summary>A program of the given files, its manifest as ProgramManifest makes it, and its files' bytes by hash.</summary>
    private static (StagedProgram Manifest, Dictionary<ByteString, byte[]> Bytes) Program(params (string Path, string Text, bool Executable)[] files)
    {
        var manifest = new StagedProgram();
        var bytes = new Dictionary<ByteString, byte[]>();
        foreach (var (path, text, executable) in files.OrderBy(file => file.Path, StringComparer.Ordinal))
        {
            var content = Encoding.UTF8.GetBytes(text);
            var sha256 = ByteString.CopyFrom(SHA256.HashData(content));
            manifest.Files.Add(new StagedFile { Path = path, Sha256 = sha256, Size = content.Length, Executable = executable });
            bytes[sha256] = content;
        }
        return (manifest, bytes);
    }

    private Task<(int Files, long Bytes)> ShipAsync(AgentClient agent, StagedProgram manifest, Dictionary<ByteString, byte[]> bytes) =>
        ProgramUpload.ShipAsync(agent, manifest, sha256 => new MemoryStream(bytes[sha256]), CancellationToken.None).WaitAsync(Timeout);

    /// <summary>A launch of rank 0 of a one-rank job running <paramref name="program"/>'s file <paramref name="path"/>, with a ticket allowing <paramref name="allowed"/>.</summary>
    private LaunchRequest Launch(StagedProgram program, string path, params StagedProgram[] allowed)
    {
        var ticket = JobTickets.Create("staged-job", 1);
        ticket.Agents.Add(new AgentRanks { Agent = Host.Address.Authority, Ranks = { 0 } });
        ticket.Staged.AddRange(allowed.Select(manifest => ByteString.CopyFrom(ProgramManifest.Digest(manifest))));
        var (signed, signature) = JobTickets.Sign(_security, ticket);
        var request = new LaunchRequest { JobId = "staged-job", WorldSize = 1, MasterAddress = "http://127.0.0.1:1", Ticket = signed, TicketSignature = signature, Staged = { program } };
        request.Ranks.Add(new RankLaunch { Rank = 0, Program = path, StagedProgram = ByteString.CopyFrom(ProgramManifest.Digest(program)) });
        return request;
    }

    private static async Task<List<LaunchEvent>> EventsAsync(AgentClient agent, LaunchRequest request)
    {
        var events = new List<LaunchEvent>();
        using var call = agent.Launch(request, deadline: DateTime.UtcNow + Timeout);
        await foreach (var item in call.ResponseStream.ReadAllAsync().WithCancellation(CancellationToken.None)) events.Add(item);
        return events;
    }

    [Fact]
    public async Task MissingFilesThenShip_TheAgentAsksOnlyForWhatItLacks()
    {
        // Arrange: two paths with the same bytes are one file.
        using var channel = RpcChannels.For(Host.Address, _security);
        var agent = new AgentClient(channel);
        var (manifest, bytes) = Program(("app.dll", "assembly", false), ("copy.dll", "assembly", false), ("lib/dep.dll", "dependency", false));

        // Act
        var before = await agent.MissingFilesAsync(manifest).ResponseAsync.WaitAsync(Timeout);
        var first = await ShipAsync(agent, manifest, bytes);
        var second = await ShipAsync(agent, manifest, bytes);

        // Assert
        Assert.Equal(2, before.Sha256.Count);
        Assert.Equal((2, (long)"assembly".Length + "dependency".Length), first);
        Assert.Equal((0, 0L), second);
        Assert.Empty((await agent.MissingFilesAsync(manifest).ResponseAsync.WaitAsync(Timeout)).Sha256);
    }

    [Fact]
    public async Task Upload_BytesOtherThanNamed_RefusedNamingTheFileAndNothingKept()
    {
        // Arrange: the hash and length of "assembly", the bytes of "assemblX", as a file changed on the way would come.
        using var channel = RpcChannels.For(Host.Address, _security);
        var agent = new AgentClient(channel);
        var (manifest, _) = Program(("app.dll", "assembly", false));
        var file = manifest.Files[0];

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(async () =>
        {
            using var call = agent.Upload(deadline: DateTime.UtcNow + Timeout);
            await call.RequestStream.WriteAsync(new FileChunk { Sha256 = file.Sha256, Size = file.Size, Data = ByteString.CopyFromUtf8("assemblX") });
            await call.RequestStream.CompleteAsync();
            await call.ResponseAsync;
        }).WaitAsync(Timeout);

        // Assert
        Assert.Equal(StatusCode.InvalidArgument, error.StatusCode);
        Assert.Contains(Convert.ToHexStringLower(file.Sha256.Span), error.Status.Detail, StringComparison.Ordinal);
        Assert.Contains("changed on the way", error.Status.Detail, StringComparison.Ordinal);
        Assert.Single((await agent.MissingFilesAsync(manifest).ResponseAsync.WaitAsync(Timeout)).Sha256);
    }

    [Fact]
    public async Task Launch_StagedProgramTheTicketDoesNotAllow_RefusedAndNothingMade()
    {
        // Arrange: the files are on the agent, but the ticket allows another program.
        using var channel = RpcChannels.For(Host.Address, _security);
        var agent = new AgentClient(channel);
        var (shipped, bytes) = Program(("run.sh", "#!/bin/sh\necho shipped\n", true));
        var (allowed, _) = Program(("run.sh", "#!/bin/sh\necho allowed\n", true));
        await ShipAsync(agent, shipped, bytes);

        // Act
        var error = await Assert.ThrowsAsync<RpcException>(() => EventsAsync(agent, Launch(shipped, "run.sh", allowed)));

        // Assert
        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
        Assert.Contains($"does not allow the staged program {Convert.ToHexStringLower(ProgramManifest.Digest(shipped))}", error.Status.Detail, StringComparison.Ordinal);
        Assert.False(Directory.Exists(Path.Combine(Store, "programs")), "The agent made the program's directory for a launch it refused.");
    }

    [Fact]
    public async Task Launch_StagedScript_RunsTheStoresCopyInItsDirectory()
    {
        // Arrange: a script in a subdirectory of its program, which says where it runs from.
        using var channel = RpcChannels.For(Host.Address, _security);
        var agent = new AgentClient(channel);
        var (program, bytes) = Program(("bin/where.sh", "#!/bin/sh\necho \"script=$0 cwd=$(pwd)\"\n", true), ("data.txt", "input", false));
        await ShipAsync(agent, program, bytes);

        // Act
        var events = await EventsAsync(agent, Launch(program, "bin/where.sh", program)).WaitAsync(Timeout);

        // Assert
        var directory = Path.Combine(Store, "programs", Convert.ToHexStringLower(ProgramManifest.Digest(program)));
        Assert.Contains(events, item => item.Output?.Line == $"script={directory}/bin/where.sh cwd={directory}");
        Assert.Equal(0, Assert.Single(events, item => item.Exited is not null).Exited.ExitCode);
        Assert.Equal("input", File.ReadAllText(Path.Combine(directory, "data.txt")));
    }
}

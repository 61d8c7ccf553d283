using System.Reflection;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A rank program published Native AOT (tests/Pmpi.NativeAotRank), as a user publishes one to start in milliseconds:
/// under `pmpi run` over shared memory and over network links, it passes every payload kind an AOT rank supports, and
/// the kinds whose codecs are made at run time are refused with an error naming the type and what to do.
/// </summary>
public sealed class NativeAotRankTests(NativeAotRankTests.PublishedRank published) : IClassFixture<NativeAotRankTests.PublishedRank>
{
    private const int Ranks = 3;

    [LinuxFact]
    public Task Run_NativeAotRanksOverSharedMemory_PassEverySupportedPayloadAndRefuseTheOthers() => RunAndCheck([]);

    [LinuxFact]
    public Task Run_NativeAotRanksOverNetworkLinks_PassEverySupportedPayloadAndRefuseTheOthers() => RunAndCheck(["--links", "network"]);

    private async Task RunAndCheck(string[] options)
    {
        // Act
        var (code, transcript) = await ChildProcess.RunAsync(PmpiCli.Command[0],
            [.. PmpiCli.Command.Skip(1), "run", .. options, "--oversubscribe", "-n", $"{Ranks}", published.Executable], PmpiCli.Timeout, PmpiCli.WithCredential(null));

        // Assert: a job named after the whole executable; every rank's checks passed, compiled ahead of time.
        Assert.True(code == 0, transcript);
        Assert.Contains("job Pmpi.NativeAotRank-", transcript, StringComparison.Ordinal);
        for (int rank = 0; rank < Ranks; rank++)
            Assert.Contains($"[{rank}] aot rank {rank}: 9 checks passed, dynamic code False", transcript, StringComparison.Ordinal);
        foreach (var type in new[] { "Sample", "Point[]" })
            Assert.Contains($"[0] refused {type}: Cannot send: a Native AOT rank cannot send or receive a {type}: its codec is made at run time.", transcript, StringComparison.Ordinal);
    }

    /// <summary>tests/Pmpi.NativeAotRank published once for linux-x64 into a temporary directory, removed after the tests.</summary>
    public sealed class PublishedRank : IAsyncLifetime
    {
        private static readonly TimeSpan PublishTimeout = TimeSpan.FromMinutes(10);
        private readonly ScratchDirectory _output = new();

        public string Executable => Path.Combine(_output.Path, "Pmpi.NativeAotRank");

        public async Task InitializeAsync()
        {
            if (!OperatingSystem.IsLinux()) return;
            var project = typeof(PublishedRank).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == "NativeAotRankProject").Value!;
            var (code, transcript) = await ChildProcess.RunAsync(PmpiCli.DotnetHost,
                ["publish", project, "-c", "Release", "-r", "linux-x64", "-o", _output.Path, "-nologo"], PublishTimeout);
            Assert.True(code == 0 && File.Exists(Executable), $"publishing {project} Native AOT failed (exit {code}):\n{transcript}");
            // Ahead-of-time compiled: an ELF executable and no IL of the program beside it.
            Assert.Equal("\u007fELF"u8.ToArray(), File.ReadAllBytes(Executable)[..4]);
            Assert.False(File.Exists(Executable + ".dll"));
        }

        public Task DisposeAsync()
        {
            _output.Dispose();
            return Task.CompletedTask;
        }
    }
}

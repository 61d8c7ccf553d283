using System.Text.RegularExpressions;
using Google.Protobuf;
using Grpc.Core;
using Pmpi.Integration.Tests.Infrastructure;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Integration.Tests.Security;

/// <summary>
/// The embedded agent and master of `pmpi run` accept only requests signed with a secret that exists in that
/// process alone: another user of the machine, who can reach the loopback port, cannot launch through it.
/// </summary>
[Trait("Category", "Security")]
public sealed partial class EmbeddedRunTests
{
    [AsAnotherUserFact]
    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    public async Task EmbeddedAgent_CalledByAnotherUid_UnauthenticatedAndNothingRuns()
    {
        // Arrange: a real `pmpi run` without any credential, its one rank blocking; the rank's PMPI_MASTER is the
        // embedded endpoint's address, which any local user can find (ss, /proc/net/tcp).
        using var scratch = new ScratchDirectory();
        File.SetUnixFileMode(scratch.Path, (UnixFileMode)0b111_111_111);
        var marker = Path.Combine(scratch.Path, "marker");
        await using var run = PmpiCli.Start(["run", "-n", "1", PmpiCli.TestRanksDll, "block"],
            new Dictionary<string, string?> { [ClusterCredentials.EnvironmentVariable] = null });
        var hello = await run.WaitForLineAsync(RankHello.Is, PmpiCli.Timeout, "the rank's hello line");
        await run.WaitForLineAsync(line => line.EndsWith("blocking", StringComparison.Ordinal), PmpiCli.Timeout, "the rank blocking");
        int rankPid = RankHello.All([hello]).Single().ProcessId;
        var master = new Uri(MasterVariable().Match(await File.ReadAllTextAsync($"/proc/{rankPid}/environ")).Groups[1].Value);
        Assert.Equal("http", master.Scheme);
        var requests = AttackRequests(master, marker);

        // Act: the attacker, as nobody, speaks gRPC to the embedded endpoint.
        var attacker = Path.Combine(scratch.Path, "attack_agent.py");
        File.Copy(Path.Combine(AppContext.BaseDirectory, "Python", "attack_agent.py"), attacker);
        await using var attack = ChildProcess.Start(AsAnotherUserFactAttribute.Setpriv,
            ["--reuid=nobody", "--regid=nogroup", "--clear-groups", GrpcioPython.Python, attacker, master.Authority,
             .. requests.Select(request => $"{request.Method}={Convert.ToHexString(request.Body)}")], GrpcioPython.Environment);
        int code = await attack.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: every call reached the endpoint and was refused; the marker program never ran; the job still runs.
        Assert.True(code == 0, $"the attacker failed to run (exit {code}).\n{attack.Transcript}");
        foreach (var (method, _) in requests)
            Assert.True(attack.Stdout.Any(line => line.StartsWith($"{method} {(int)StatusCode.Unauthenticated} ", StringComparison.Ordinal)),
                $"{method} from another uid was not refused as UNAUTHENTICATED.\n{attack.Transcript}");
        Assert.False(File.Exists(marker), "a call from another uid ran the marker program");
        Assert.False(run.HasExited, $"pmpi run ended under the attack.\n{run.Transcript}");
    }

    [Fact]
    public async Task Run_NodesNamedWithoutCredential_Exit2NamingTheCredentialAndNothingRuns()
    {
        // Arrange: the embedded master's per-run secret means nothing to another agent, so it must not even try.
        using var scratch = new ScratchDirectory();
        var marker = Path.Combine(scratch.Path, "marker");
        var file = scratch.Write("nodes.xml", Computation.Of("nodes", 1, ["marker", marker], ("a", "127.0.0.1:9", 1)));
        await using var run = PmpiCli.Start(["run", file], new Dictionary<string, string?> { [ClusterCredentials.EnvironmentVariable] = null });

        // Act
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}, expected 2.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.Contains("--credentials", StringComparison.Ordinal) && line.Contains("nodes.xml", StringComparison.Ordinal));
        Assert.False(File.Exists(marker), "a rank ran");
    }

    /// <summary>Requests that would run the marker program, kill the job, or describe the node if accepted.</summary>
    private static List<(string Method, byte[] Body)> AttackRequests(Uri master, string marker)
    {
        var launch = new LaunchRequest { JobId = "attack", WorldSize = 1, MasterAddress = master.ToString() };
        launch.Ranks.Add(new RankLaunch { Rank = 0, Program = PmpiCli.TestRanksDll, Arguments = { "marker", marker } });
        var xml = $"""
            <computation name="attack" xmlns="urn:pmpi:computation:v1">
              <ranks program="{PmpiCli.TestRanksDll}" count="1"><arg>marker</arg><arg>{marker}</arg></ranks>
            </computation>
            """;
        return
        [
            (ServicePaths.GetNodeInfo, new NodeInfoRequest().ToByteArray()),
            (ServicePaths.Launch, launch.ToByteArray()),
            (ServicePaths.Submit, new SubmitRequest { FileName = marker + ".xml", ComputationXml = xml }.ToByteArray()),
            (ServicePaths.Kill, new KillRequest { JobId = "any", JobToken = "any" }.ToByteArray()),
        ];
    }

    [GeneratedRegex(@"(?:^|\0)PMPI_MASTER=([^\0]+)")]
    private static partial Regex MasterVariable();
}

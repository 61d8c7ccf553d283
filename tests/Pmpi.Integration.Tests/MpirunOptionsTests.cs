using System.Net;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi run` read as mpirun reads its command line: -np, -x, programs on PATH, one rank per slot, and unknown options refused by name.</summary>
public sealed class MpirunOptionsTests
{
    [LinuxFact]
    public async Task Run_NpAsN_RunsThatManyRanks()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-np", "2", "/bin/sh", "-c", "echo size=$PMPI_SIZE"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(["[0] size=2", "[1] size=2"], run.Stdout.Order());
    }

    [LinuxFact]
    public async Task Run_ProgramNamedWithoutPath_IsFoundOnPathAndRunsOnEveryRank()
    {
        // Act: as `mpirun -n 2 hostname`.
        await using var run = PmpiCli.Start(["run", "-n", "2", "hostname"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal([$"[0] {Dns.GetHostName()}", $"[1] {Dns.GetHostName()}"], run.Stdout.Order());
    }

    [LinuxFact]
    public async Task Run_WithoutN_RunsOneRankPerLogicalCore()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "/bin/sh", "-c", "echo size=$PMPI_SIZE"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(System.Environment.ProcessorCount, run.Stdout.Count(line => line.EndsWith($"] size={System.Environment.ProcessorCount}", StringComparison.Ordinal)));
    }

    [LinuxFact]
    public async Task Run_ExportWithValueAndBare_EveryRankHasBothAndNoCommandLineHasTheBareOnesValue()
    {
        // Arrange: the bare -x passes on pmpi run's own value, which is in no command line.
        const string Secret = "not-in-any-argv";
        var environment = new Dictionary<string, string?> { ["TESTRANKS_SECRET"] = Secret };

        // Act: each rank prints its variables, then the command line of its process.
        await using var run = PmpiCli.Start(["run", "-n", "2", "-x", "PLAIN=1", "-x", "TESTRANKS_SECRET", "/bin/sh", "-c",
            "echo plain=$PLAIN secret=$TESTRANKS_SECRET; tr '\\0' ' ' < /proc/$$/cmdline; echo"], environment);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains($"[0] plain=1 secret={Secret}", run.Stdout);
        Assert.Contains($"[1] plain=1 secret={Secret}", run.Stdout);
        Assert.Equal(2, run.Stdout.Count(line => line.Contains("/bin/sh -c", StringComparison.Ordinal) && !line.Contains(Secret, StringComparison.Ordinal)));
    }

    [Theory]
    [InlineData("NOT_SET_ANYWHERE_42", "NOT_SET_ANYWHERE_42 is not set here")]
    [InlineData("9LIVES=1", "'9LIVES' is not a variable name")]
    [InlineData("PMPI_RANK=3", "the PMPI_* variables are PMPI's own")]
    public async Task Run_ExportThatCannotBeSet_FailsNamingItBeforeLaunching(string export, string expected)
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-n", "1", "-x", export, PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.StartsWith($"pmpi run: -x ", StringComparison.Ordinal) && line.Contains(expected, StringComparison.Ordinal));
        Assert.DoesNotContain(run.Stderr, line => line.Contains("launched", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("--frob")]
    [InlineData("-q")]
    [InlineData("--wdir=/tmp")]
    public async Task Run_UnknownOptionBeforeTheProgram_FailsNamingItBeforeLaunching(string option)
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-n", "1", option, PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains($"pmpi run: unknown option '{option.Split('=')[0]}'", run.Transcript);
        Assert.DoesNotContain(run.Stderr, line => line.Contains("launched", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("-np", "two", "-n two: expected a number of ranks.")]
    [InlineData("--register-timeout", "soon", "--register-timeout soon: expected a number of seconds.")]
    public async Task Run_OptionValueThatIsNotANumber_FailsSayingWhatItExpected(string option, string value, string expected)
    {
        // Act
        await using var run = PmpiCli.Start(["run", option, value, PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: in the option's terms, not .NET's type names.
        Assert.True(code != 0, $"pmpi run exited with 0.\n{run.Transcript}");
        Assert.Contains(expected, run.Stderr);
        Assert.DoesNotContain("System.", run.Transcript, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Run_MasterRefusesTheComputationItStandsFor_TheErrorPointsAtNoFile()
    {
        // Arrange: the master's own agent has one slot, which only it knows.
        await using var agent = await AgentProcess.StartAsync("one-slot", slots: 1);

        // Act
        await using var run = PmpiCli.Start(["run", "--master", agent.Address.ToString(), "-n", "3", PmpiCli.TestRanksDll]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: the computation file mpirun's form stands for exists nowhere, so its name and lines stay out of it.
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.StartsWith("pmpi run: 3 ranks exceed the 1 slots of the local agent", StringComparison.Ordinal) && line.Contains("--oversubscribe", StringComparison.Ordinal));
        Assert.DoesNotContain(".xml", run.Transcript, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Run_ProgramNeitherHereNorOnPath_FailsNamingIt()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-n", "1", "no-such-program-anywhere"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 2, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("pmpi run: program 'no-such-program-anywhere' is neither in the current directory nor on PATH.", run.Stderr);
    }
}

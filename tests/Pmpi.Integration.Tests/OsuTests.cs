using System.Globalization;
using System.Text.RegularExpressions;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// The OSU micro-benchmarks (bench/Pmpi.Osu) as a user runs them, under `pmpi run` with rank 0's lines untagged:
/// each prints OMB 7.4's header lines and column header, then one row per size in order, each a size and positive
/// numbers in OMB's format (<c>%-10d</c>, then <c>%20.2f</c> per value), so the table reads as a native osu_*'s.
/// Small sizes and few iterations; no number is held to a bound.
/// </summary>
public sealed partial class OsuTests
{
    private static readonly int[] SizesUpTo1024 = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

    [Theory]
    [InlineData("latency", 2, "OSU MPI Latency Test", new[] { "Avg Latency(us)" })]
    [InlineData("bw", 2, "OSU MPI Bandwidth Test", new[] { "Bandwidth (MB/s)" })]
    [InlineData("bibw", 2, "OSU MPI Bi-Directional Bandwidth Test", new[] { "Bandwidth (MB/s)" })]
    [InlineData("allreduce", 4, "OSU MPI Allreduce Latency Test", new[] { "Avg Latency(us)" })]
    [InlineData("bcast", 4, "OSU MPI Broadcast Latency Test", new[] { "Avg Latency(us)" })]
    [InlineData("alltoall", 4, "OSU MPI All-to-All Personalized Exchange Latency Test", new[] { "Avg Latency(us)" })]
    public async Task Run_Benchmark_PrintsOmbPreambleThenOneRowPerSize(string benchmark, int ranks, string title, string[] columns)
    {
        // Act
        var stdout = await RunAsync(ranks, benchmark, "-m", "1:1024", "-i", "20", "-x", "2");

        // Assert: print_preamble's empty line and header, the datatype, the columns, then the rows.
        Assert.Equal(["", $"# {title} (PMPI port of OMB 7.4)", "# Datatype: MPI_CHAR.", ColumnHeader(columns)], stdout.Take(4));
        AssertRows(stdout.Skip(4).ToList(), SizesUpTo1024, columns.Length);
    }

    [Fact]
    public async Task Run_MultiPairBandwidthOnFourRanks_PrintsPairsAndWindowThenRateRows()
    {
        // Act
        var stdout = await RunAsync(4, "mbw_mr", "-m", "1:1024", "-i", "10", "-x", "2", "-W", "16");

        // Assert: osu_mbw_mr's own header (no empty line first), two pairs, then bandwidth and message rate per size.
        string[] columns = ["MB/s", "Messages/s"];
        Assert.Equal(["# OSU MPI Multiple Bandwidth / Message Rate Test (PMPI port of OMB 7.4)", "# [ pairs: 2 ] [ window size: 16 ]",
            "# Datatype: MPI_CHAR.", ColumnHeader(columns)], stdout.Take(4));
        AssertRows(stdout.Skip(4).ToList(), SizesUpTo1024, columns.Length);
    }

    [Fact]
    public async Task Run_CollectiveWithFull_PrintsMinMaxAndIterationsColumns()
    {
        // Act: above 8 KB OMB takes its large-message count, here what -i sets for both.
        var stdout = await RunAsync(4, "allreduce", "-f", "-m", "4096:16384", "-i", "5", "-x", "1");

        // Assert
        Assert.Equal("# Size         Avg Latency(us)     Min Latency(us)     Max Latency(us)  Iterations", stdout[3]);
        var rows = stdout.Skip(4).ToList();
        AssertRows(rows, [4096, 8192, 16384], values: 3, iterations: true);
        Assert.All(rows, row => Assert.EndsWith($"{5,12}", row, StringComparison.Ordinal));
    }

    [Fact]
    public async Task Run_LatencyWithoutMinimum_StartsAtZeroBytes()
    {
        // Act: OMB's osu_latency starts at 0 bytes unless -m names a minimum.
        var stdout = await RunAsync(2, "latency", "-m", "4", "-i", "10", "-x", "1");

        // Assert
        AssertRows(stdout.Skip(4).ToList(), [0, 1, 2, 4], values: 1);
    }

    [Fact]
    public async Task Run_LatencyOnFourRanks_RefusesAsOmbDoes()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", "4", PmpiCli.OsuDll, "latency"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 1, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains(run.Stderr, line => line.EndsWith("This test requires exactly two processes", StringComparison.Ordinal));
    }

    [Fact]
    public async Task Run_UnknownOption_PrintsOmbsMessageAndUsageAndExitsOne()
    {
        // Act
        await using var run = PmpiCli.Start(["run", "-n", "2", "--no-tag-output", PmpiCli.OsuDll, "bw", "-i", "0"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 1, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Contains("Invalid Number of Iterations [-i 0]", run.Stderr);
        Assert.Contains("Usage: pmpi run -n 2 Pmpi.Osu.dll bw [options]   (OMB's osu_bw)", run.Stdout);
    }

    // `pmpi run -n RANKS --no-tag-output Pmpi.Osu.dll ARGS` must succeed; its standard output.
    private static async Task<IReadOnlyList<string>> RunAsync(int ranks, params string[] args)
    {
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", $"{ranks}", "--no-tag-output", PmpiCli.OsuDll, .. args]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        return run.Stdout;
    }

    // "# Size" in 10 columns, then each column's name right-aligned in 20.
    private static string ColumnHeader(string[] columns) => "# Size    " + string.Concat(columns.Select(c => c.PadLeft(20)));

    // One row per size, in order: the size left-aligned in 10 columns, each value a number with two decimals
    // right-aligned in 20, and with iterations a count right-aligned in 12. Every value of the last row is positive;
    // before it, a tiny message's bandwidth on a loaded machine may round to 0.00, as it would in OMB's table.
    private static void AssertRows(IReadOnlyList<string> rows, int[] sizes, int values, bool iterations = false)
    {
        Assert.Equal(sizes.Length, rows.Count);
        for (int i = 0; i < sizes.Length; i++)
        {
            string row = rows[i];
            Assert.True(row.Length == 10 + 20 * values + (iterations ? 12 : 0), $"Row '{row}' is not as wide as OMB's.");
            Assert.Equal($"{sizes[i],-10}", row[..10]);
            for (int v = 0; v < values; v++)
            {
                string field = row.Substring(10 + 20 * v, 20);
                Assert.Matches(Number(), field);
                double value = double.Parse(field, CultureInfo.InvariantCulture);
                Assert.True(i == sizes.Length - 1 ? value > 0 : value >= 0, $"Row '{row}' has a value out of range.");
            }
        }
    }

    [GeneratedRegex(@"^ *[0-9]+\.[0-9]{2}$")]
    private static partial Regex Number();
}

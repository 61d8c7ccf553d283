using System.Globalization;

namespace Pmpi.Tests.Shared;

/// <summary>
/// How much the fuzz tests do: a fixed, quick seed set by default (CI), or what PMPI_FUZZ_SEEDS ("1,2,3" or "1-500")
/// and PMPI_FUZZ_ITERATIONS (calls per seed) say, which bench/fuzz.sh sets for a long run.
/// </summary>
internal static class FuzzSettings
{
    public static IReadOnlyList<int> Seeds { get; } = ParseSeeds(System.Environment.GetEnvironmentVariable("PMPI_FUZZ_SEEDS") ?? "1,2,3");

    public static int Iterations { get; } =
        int.TryParse(System.Environment.GetEnvironmentVariable("PMPI_FUZZ_ITERATIONS"), NumberStyles.None, CultureInfo.InvariantCulture, out int n) && n > 0 ? n : 100;

    private static int[] ParseSeeds(string text)
    {
        if (text.Split('-') is [var from, var to] && int.TryParse(from, CultureInfo.InvariantCulture, out int first) && int.TryParse(to, CultureInfo.InvariantCulture, out int last))
            return [.. Enumerable.Range(first, last - first + 1)];
        return [.. text.Split(',', StringSplitOptions.RemoveEmptyEntries).Select(seed => int.Parse(seed, CultureInfo.InvariantCulture))];
    }
}

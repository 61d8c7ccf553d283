using System.Globalization;

namespace Pmpi.Osu;

/// <summary>
/// OMB's output, written by rank 0 alone: header lines, the column header and one row per size in OMB's printf
/// formats (osu_util_mpi.c): <c>%-10s</c> for "# Size", <c>%20s</c> for each column name, then <c>%-10d</c> and
/// <c>%20.2f</c> per value (<c>%12s</c>/<c>%12lu</c> for Iterations), so a row lines up with the native osu_* row.
/// </summary>
/// <param name="benchmark">The benchmark whose header the report prints.</param>
/// <param name="output">Where rank 0 writes.</param>
/// <param name="writes">Whether this rank writes (rank 0).</param>
internal sealed class OsuReport(Benchmark benchmark, TextWriter output, bool writes)
{
    /// <summary>Each value column's width (OMB's FIELD_WIDTH).</summary>
    private const int FieldWidth = 20;

    /// <summary>
    /// The datatype line: OMB 7.4 sends MPI_CHAR, one byte an element, as these benchmarks send byte[] (and
    /// allreduce sums bytes, as OMB sums chars).
    /// </summary>
    public const string DatatypeLine = "# Datatype: MPI_CHAR.";

    /// <summary>Writes <paramref name="line"/> on rank 0.</summary>
    public void Line(string line)
    {
        if (writes) output.WriteLine(line);
    }

    /// <summary>The benchmark's header line (<see cref="Benchmark.Header"/>).</summary>
    public void Header() => Line(benchmark.Header);

    /// <summary>
    /// OMB's preamble for all but mbw_mr (print_preamble): an empty line, then the benchmark's header line; then the
    /// datatype line and the column header.
    /// </summary>
    public void Preamble(params string[] columns)
    {
        Line("");
        Header();
        Line(DatatypeLine);
        Columns(columns);
    }

    /// <summary>The column header: "# Size" then each name right-aligned in its field (the last Iterations in 12).</summary>
    public void Columns(params string[] columns)
    {
        if (!writes) return;
        var line = new System.Text.StringBuilder("# Size".PadRight(10));
        foreach (string column in columns) line.Append(column.PadLeft(column == "Iterations" ? 12 : FieldWidth));
        output.WriteLine(line.ToString());
    }

    /// <summary>A row: the size, each value as <c>%20.2f</c>, then <paramref name="iterations"/> as <c>%12lu</c> when given.</summary>
    public void Row(int size, ReadOnlySpan<double> values, int? iterations = null)
    {
        if (!writes) return;
        var line = new System.Text.StringBuilder(size.ToString(CultureInfo.InvariantCulture).PadRight(10));
        foreach (double value in values) line.Append(value.ToString("F2", CultureInfo.InvariantCulture).PadLeft(FieldWidth));
        if (iterations is { } count) line.Append(count.ToString(CultureInfo.InvariantCulture).PadLeft(12));
        output.WriteLine(line.ToString());
    }
}

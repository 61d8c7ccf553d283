using System.Globalization;
using System.Text.RegularExpressions;
using System.Xml.Linq;
using Pmpi.Integration.Tests.Infrastructure;
using CSharpMatMul = Pmpi.Examples.CSharp.MatMul;
using FSharpMatMul = Pmpi.Examples.FSharp.MatMul;
using VisualBasicMatMul = Pmpi.Examples.VisualBasic.MatMul;

namespace Pmpi.Integration.Tests;

/// <summary>
/// The PMPI paper's matrix multiply with ranks written in C#, Visual Basic and F#: as threads of one process (the
/// three example assemblies loaded side by side) and as processes of `pmpi run` from the computation files in
/// examples/jobs. The product is checked against one computed here, not only against the master's own check.
/// </summary>
public sealed partial class MatMulTests
{
    [Fact]
    public void Master_CSharpWithVisualBasicAndFSharpWorkersInProcess_ProductIsExact()
    {
        // Arrange: 50 rows over 3 workers, so the shares differ (17, 17, 16).
        const int rows = 50, columns = 40, columnsOfB = 30;
        Pmpi.Examples.CSharp.MatMulResult? result = null;

        // Act
        Environment.Run(4, world =>
        {
            switch (world.Rank)
            {
                case 0: result = CSharpMatMul.Master(world, rows, columns, columnsOfB); break;
                case 1: VisualBasicMatMul.Worker(world, "Visual Basic"); break;
                case 2: FSharpMatMul.worker(world, "F#"); break;
                default: VisualBasicMatMul.Worker(world, "Visual Basic"); break;
            }
        }, new EnvironmentOptions { Timeout = PmpiCli.Timeout });

        // Assert
        Assert.NotNull(result);
        Assert.Equal(["Visual Basic", "F#", "Visual Basic"], result.Workers);
        AssertProduct(rows, columns, columnsOfB, result.Product);
        Assert.True(result.MaxError <= CSharpMatMul.Tolerance, $"The master measured a max abs error of {result.MaxError}.");
    }

    [Fact]
    public void Master_FSharpWithCSharpAndVisualBasicWorkersInProcess_ProductIsExact()
    {
        const int rows = 31, columns = 17, columnsOfB = 9;
        FSharpMatMul.MatMulResult? result = null;

        Environment.Run(3, world =>
        {
            switch (world.Rank)
            {
                case 0: result = FSharpMatMul.master(world, rows, columns, columnsOfB); break;
                case 1: CSharpMatMul.Worker(world, "C#"); break;
                default: VisualBasicMatMul.Worker(world, "Visual Basic"); break;
            }
        }, new EnvironmentOptions { Timeout = PmpiCli.Timeout });

        Assert.NotNull(result);
        Assert.Equal(["C#", "Visual Basic"], result.Workers);
        AssertProduct(rows, columns, columnsOfB, result.Product);
    }

    [Theory]
    [InlineData("matmul-mixed.xml", "C#", new[] { "Visual Basic", "Visual Basic", "F#", "F#" })]
    [InlineData("matmul-polyglot.xml", "F#", new[] { "C#", "Visual Basic worker" })]
    public async Task Run_MixedLanguageComputationFile_PrintsVerifiedProduct(string file, string master, string[] workers)
    {
        // Arrange: the computation file from examples/jobs, its programs pointed at the (Debug) builds next to this
        // test and the master's paper-sized matrices cut to a fifth per side, so the test takes seconds, not a minute.
        var computation = XDocument.Load(Path.Combine(AppContext.BaseDirectory, "jobs", file));
        var groups = computation.Descendants(XName.Get("ranks", "urn:pmpi:computation:v1")).ToList();
        foreach (var ranks in groups)
            ranks.SetAttributeValue("program", Path.Combine(AppContext.BaseDirectory, Path.GetFileName(ranks.Attribute("program")!.Value)));
        Assert.Equal("2400 1200 500", groups[0].Attribute("args")?.Value);
        groups[0].SetAttributeValue("args", "480 240 100");
        using var scratch = new ScratchDirectory();
        var path = scratch.Write(file, computation.ToString());

        // Act
        await using var run = PmpiCli.Start(["run", path]);
        int code = await run.WaitForExitAsync(TimeSpan.FromMinutes(3));

        // Assert: every worker reported in, and the product the master printed is the one computed here.
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        Assert.Equal(workers.Select((language, w) => $"[0] worker {w + 1}: {language}"), run.Stdout.Where(line => line.StartsWith("[0] worker ", StringComparison.Ordinal)));
        var summary = run.Stdout.Select(line => Summary().Match(line)).SingleOrDefault(m => m.Success);
        Assert.True(summary is not null, $"No result line in the output.\n{run.Transcript}");
        int rows = Int(summary.Groups["rows"]), columns = Int(summary.Groups["columns"]), columnsOfB = Int(summary.Groups["columnsOfB"]);
        Assert.Equal((master, workers.Length), (summary.Groups["master"].Value, Int(summary.Groups["workers"])));
        Assert.True(double.Parse(summary.Groups["error"].Value, CultureInfo.InvariantCulture) <= CSharpMatMul.Tolerance, summary.Value);
        double sum = double.Parse(summary.Groups["sum"].Value, CultureInfo.InvariantCulture);
        double expected = Product(rows, columns, columnsOfB).Sum();
        Assert.True(Math.Abs(sum - expected) <= 1e-6 * Math.Max(1, Math.Abs(expected)), $"The sum of C is {sum}; computed here: {expected}.");
    }

    private static void AssertProduct(int rows, int columns, int columnsOfB, double[] product)
    {
        var expected = Product(rows, columns, columnsOfB);
        Assert.Equal(expected.Length, product.Length);
        for (int i = 0; i < expected.Length; i++)
            Assert.True(Math.Abs(expected[i] - product[i]) <= 1e-9, $"C[{i / columnsOfB},{i % columnsOfB}] is {product[i]}, expected {expected[i]}.");
    }

    // The documented matrices, multiplied in i-j-k order (a different order from the examples'), so the check is independent.
    internal static double[] Product(int rows, int columns, int columnsOfB)
    {
        var c = new double[rows * columnsOfB];
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < columnsOfB; j++)
            {
                double sum = 0;
                for (int k = 0; k < columns; k++)
                    sum += ((i * 31 + k * 17) % 101 / 101.0 - 0.5) * ((k * 13 + j * 7) % 37 / 37.0 - 0.25);
                c[i * columnsOfB + j] = sum;
            }
        return c;
    }

    private static int Int(System.Text.RegularExpressions.Group group) => int.Parse(group.Value, CultureInfo.InvariantCulture);

    [GeneratedRegex(@"^\[0\] C = A\((?<rows>\d+)x(?<columns>\d+)\) x B\(\d+x(?<columnsOfB>\d+)\) by a master in (?<master>.+) and (?<workers>\d+) workers in \S+ s \(sequential \S+ s\), max abs error (?<error>\S+), sum of C (?<sum>\S+)$")]
    internal static partial Regex Summary();
}

// The PMPI paper's sample: C = A × B by a master and workers. Rank 0 is the master, every other rank a worker; the
// workers may be this program or MatMul.VisualBasic / MatMul.FSharp, which speak the same protocol (see MatMul.cs).
// Run: dotnet run --project examples/MatMul.CSharp -- --pmpi-ranks 3 [rows cols columnsOfB] [--label text]
using Pmpi;
using Pmpi.Examples.CSharp;
using Environment = Pmpi.Environment;

Environment.Run(ref args, world =>
{
    var (sizes, label) = MatMul.ParseArguments(args);
    if (world.Rank != 0)
    {
        MatMul.Worker(world, label ?? "C#");
        return;
    }
    var result = MatMul.Master(world, sizes[0], sizes[1], sizes[2]);
    foreach (var line in result.Report("C#")) Console.WriteLine(line);
    if (result.MaxError > MatMul.Tolerance) world.Abort(3);
});

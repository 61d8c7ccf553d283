// Computes pi by integrating 4 / (1 + x²) over [0, 1]: each rank sums every size-th strip, then Reduce adds the parts.
// Run: dotnet run --project examples/Pi.CSharp -- --pmpi-ranks 4 [strips]
using Pmpi;
using Environment = Pmpi.Environment;

Environment.Run(ref args, world =>
{
    long strips = args.Length > 0 ? long.Parse(args[0], System.Globalization.CultureInfo.InvariantCulture) : 50_000_000;
    world.Broadcast(ref strips, root: 0);

    double start = Environment.Time;
    double width = 1.0 / strips, sum = 0;
    for (long i = world.Rank; i < strips; i += world.Size)
    {
        double x = (i + 0.5) * width;
        sum += 4.0 / (1.0 + x * x);
    }
    double pi = world.Reduce(sum * width, Operation<double>.Add, root: 0);

    if (world.Rank == 0)
    {
        Console.WriteLine($"pi ≈ {pi:F12} (error {Math.Abs(pi - Math.PI):E2}) from {strips:N0} strips on {world.Size} ranks in {Environment.Time - start:F3} s");
    }
});

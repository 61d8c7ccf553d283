// A token goes around the ring of ranks [laps] times, each rank adding one. Rank 0 starts it and checks the count.
// Run: dotnet run --project examples/Ring.CSharp -- --pmpi-ranks 4 [laps]
using System.Globalization;
using Pmpi;
using Environment = Pmpi.Environment;

Environment.Run(ref args, world =>
{
    int laps = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 3;
    int next = (world.Rank + 1) % world.Size, previous = (world.Rank + world.Size - 1) % world.Size;
    int token = 0;
    for (int lap = 0; lap < laps; lap++)
    {
        if (world.Rank == 0)
        {
            world.Send(token + 1, next, 0);
            token = world.Receive<int>(previous, 0);
        }
        else
        {
            token = world.Receive<int>(previous, 0);
            world.Send(token + 1, next, 0);
        }
    }
    if (world.Rank == 0)
        Console.WriteLine($"The token went {laps} times around {world.Size} ranks (C#): {token}, expected {laps * world.Size}");
});

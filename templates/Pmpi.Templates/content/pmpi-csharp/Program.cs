// Run as 4 processes: pmpi run -n 4 bin/Debug/net10.0/PmpiJob.dll (the pmpi tool: dotnet tool install --global Pmpi.Cli)
// or as 4 threads of one process: dotnet run -- --pmpi-ranks 4
using Pmpi;
using Environment = Pmpi.Environment;   // System.Environment has the same name

Environment.Run(ref args, world =>
{
    Console.WriteLine($"Hello from rank {world.Rank} of {world.Size} on {Environment.ProcessorName}");

    // Every rank contributes its rank and every rank receives the sum: 0 + 1 + ... + (size - 1).
    int sum = world.Allreduce(world.Rank, Operation<int>.Add);
    if (world.Rank == 0) Console.WriteLine($"The ranks add up to {sum}");
});

// Every rank says hello. Run: dotnet run --project examples/Hello.CSharp -- --pmpi-ranks 4, or pmpi run -n 4 Hello.CSharp.dll
using Pmpi;
using Environment = Pmpi.Environment;

Environment.Run(ref args, world =>
    Console.WriteLine($"Hello from rank {world.Rank} of {world.Size} on {Environment.ProcessorName} (C#)"));

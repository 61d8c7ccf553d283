// `pmpi run -n N Pmpi.Bench.Hello`: each rank initialises, waits in a barrier and reports its resident memory, as
// bench/native/hello.c does (Launch/HelloBenchmark.cs, shared with Pmpi.Bench's `hello`).
using Pmpi.Bench.Launch;
using Environment = Pmpi.Environment;

Environment.Run(ref args, world => HelloBenchmark.Run(world, Console.Out));

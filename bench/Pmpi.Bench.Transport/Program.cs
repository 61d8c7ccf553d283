// PMPI's own HTTP/2 for rank streams beside gRPC for .NET: the same Frame ping-pong over each, in one process over
// loopback, h2c or TLS (docs/benchmarks.md, "PMPI's HTTP/2 beside gRPC for .NET").
//   dotnet run -c Release --project bench/Pmpi.Bench.Transport -- [--rounds N] [--sizes N...] [--quick] [--tls]
using System.CommandLine;
using Pmpi.Bench.Transport;

var sizes = new Option<int[]>("--sizes")
{
    Description = "Payload bytes per Data frame.",
    AllowMultipleArgumentsPerToken = true,
    DefaultValueFactory = _ => TransportBenchmark.Sizes,
};
sizes.Validators.Add(result =>
{
    if ((result.GetValueOrDefault<int[]>() ?? []).Any(n => n < 1)) result.AddError("--sizes takes sizes of 1 byte and more.");
});
var rounds = new Option<int>("--rounds") { Description = "Rounds, each running both implementations (their order alternating).", DefaultValueFactory = _ => 3 };
var quick = new Option<bool>("--quick") { Description = "A tenth of the warmed iterations (the cold 100 stay)." };
var tls = new Option<bool>("--tls") { Description = "TLS 1.3 with a pinned self-signed certificate at each end (PMPI: RpcSecurity.RankEndpoint), instead of h2c." };
var root = new RootCommand("Half round-trip latency (us) and bandwidth (MB/s) of a Frame ping-pong over PMPI's HTTP/2 and over gRPC for .NET, cold and warmed.")
{
    sizes, rounds, quick, tls,
};
root.SetAction((parse, _) => TransportBenchmark.RunAsync(Console.Out, parse.GetValue(sizes)!, parse.GetValue(rounds), parse.GetValue(quick), parse.GetValue(tls)));
return await root.Parse(args).InvokeAsync();

// A program's first round trips, written as a user writes a first ping-pong against PMPI's public API: 1 byte between
// ranks 0 and 1 from the first message after initialising, without warm-up, timed in windows that end at round trip
// 1, 10, 100, 1,000, 10,000 and 100,000 (--quick: up to 10,000), as bench/native/firstmessages.c. Rank 0 prints a
// line a window, "last_round_trip<TAB>half_rtt_us<TAB>methods_compiled<TAB>jit_ms": the window's mean, and what the
// JIT compiled in rank 0's process meanwhile (nothing when the program is published Native AOT).
using System.Diagnostics;
using System.Runtime;
using Pmpi;

using var environment = new Pmpi.Environment(ref args);
var world = Communicator.world;
bool quick = args is ["--quick"];
if (args.Length > 0 && !quick)
{
    if (world.Rank == 0) Console.Error.WriteLine($"unknown argument '{args[0]}' (usage: firstmessages [--quick]).");
    world.Abort(2);
}
int done = 0;
var message = new byte[1];
// Each window's figures are kept as numbers and printed at the end, so that formatting them compiles nothing meanwhile.
int windows = quick ? 5 : 6;
var halfRoundTrips = new double[windows];
var compiled = new long[windows];
var jitTimes = new TimeSpan[windows];
for (int window = 0, end = 1; window < windows; window++, end *= 10)
{
    long start = Stopwatch.GetTimestamp(), compiledBefore = JitInfo.GetCompiledMethodCount();
    var jitBefore = JitInfo.GetCompilationTime();
    int first = done;
    for (; done < end; done++)
    {
        if (world.Rank == 0)
        {
            world.Send(message, 1, 7);
            world.Receive(1, 7, ref message);
        }
        else if (world.Rank == 1)
        {
            world.Receive(0, 7, ref message);
            world.Send(message, 0, 7);
        }
    }
    halfRoundTrips[window] = Stopwatch.GetElapsedTime(start).TotalMicroseconds / (end - first) / 2;
    compiled[window] = JitInfo.GetCompiledMethodCount() - compiledBefore;
    jitTimes[window] = JitInfo.GetCompilationTime() - jitBefore;
}
if (world.Rank == 0)
{
    Console.WriteLine("# PMPI, 2 ranks, from the first message: last_round_trip\thalf_rtt_us\tmethods_compiled\tjit_ms");
    for (int window = 0, end = 1; window < windows; window++, end *= 10)
        Console.WriteLine($"{end}\t{halfRoundTrips[window]:F3}\t{compiled[window]}\t{jitTimes[window].TotalMilliseconds:F1}");
}

using BenchmarkDotNet.Attributes;
using Pmpi.Matching;
using Pmpi.Payloads;

namespace Pmpi.Bench.Matching;

/// <summary>
/// The matching engine alone, on one thread: the cost of matching a message to a receive, in both orders, with no
/// transport and no waiting. Run with <c>matching</c> (BenchmarkDotNet; extra arguments are passed on to it).
/// </summary>
[MemoryDiagnoser]
public class MatchingEngineBenchmarks
{
    private static readonly PayloadType ByteArray = new(PayloadCode.Byte, true, null);
    private static readonly byte[] Payload = new byte[8];
    private readonly MatchingEngine _engine = new();
    private readonly Envelope _envelope = new(0, 1, 0);

    /// <summary>The message arrives first and waits as unexpected; the receive finds it when posted.</summary>
    [Benchmark(Baseline = true)]
    public bool DeliverThenPost()
    {
        _engine.Deliver(new Message(_envelope, ByteArray, Payload));
        var receive = _engine.Post(_envelope);
        receive.Message!.Release();
        return receive.IsCompleted;
    }

    /// <summary>The receive is posted first; the message completes it on arrival (the ping-pong's usual order).</summary>
    [Benchmark]
    public bool PostThenDeliver()
    {
        var receive = _engine.Post(_envelope);
        _engine.Deliver(new Message(_envelope, ByteArray, Payload));
        receive.Message!.Release();
        return receive.IsCompleted;
    }
}

// A rank compiled ahead of time: `Pmpi.NativeAotRank` run by `pmpi run -n N` (N >= 2). Each rank passes values of
// every kind an AOT rank supports around the ring and through collectives, checks what it got, and prints
// "aot rank R: N checks passed, dynamic code False"; rank 0 then tries the kinds that need code made at run time and
// prints "refused T: <error>" for each. Any wrong value throws, which fails the job.
using System.Runtime.CompilerServices;
using System.Text.Json;
using System.Text.Json.Serialization;
using Pmpi;
using Pmpi.Payloads;
using Environment = Pmpi.Environment;

var options = new EnvironmentOptions { Serializer = new JsonPayloadSerializer(new JsonSerializerOptions { TypeInfoResolver = RankJson.Default }) };
Environment.Run(ref args, world =>
{
    int next = (world.Rank + 1) % world.Size, previous = (world.Rank + world.Size - 1) % world.Size;
    int checks = 0;
    void Check(bool passed, string what)
    {
        if (!passed) throw new InvalidOperationException($"rank {world.Rank}: {what} came wrong");
        checks++;
    }

    world.Send(new double[] { world.Rank, world.Rank + 0.5 }, next, 1);
    var doubles = world.Receive<double[]>(previous, 1);
    Check(doubles is [var a, var b] && a == previous && b == previous + 0.5, "a double[]");

    world.Send(new float[] { world.Rank, 2, 3 }, next, 2);
    var floats = new float[3];
    world.Receive(previous, 2, ref floats);
    Check(floats[0] == previous && floats[2] == 3, "a float[] into the caller's array");

    world.Send(new Point(world.Rank, -world.Rank), next, 3);
    Check(world.Receive<Point>(previous, 3) == new Point(previous, -previous), "an unmanaged struct");

    world.Send($"from {world.Rank}", next, 4);
    Check(world.Receive<string>(previous, 4) == $"from {previous}", "a string");

    world.Send(new List<int> { world.Rank, 7 }, next, 5);
    Check(world.Receive<List<int>>(previous, 5) is [var first, 7] && first == previous, "a List<int> through the source-generated serializer");

    int n = world.Size;
    Check(world.Allreduce(world.Rank + 1.0, Operation<double>.Add) == n * (n + 1) / 2.0, "Allreduce of a double");
    Check(world.Allreduce(new long[] { world.Rank, -world.Rank }, Operation<long>.Max) is [var max, 0] && max == n - 1, "Allreduce of a long[]");
    int[] broadcast = world.Rank == 0 ? [4, 5, 6] : new int[3];
    world.Broadcast(ref broadcast, 0);
    Check(broadcast is [4, 5, 6], "Broadcast of an int[]");
    Check(world.Allgather(world.Rank * 10).SequenceEqual(Enumerable.Range(0, n).Select(r => r * 10)), "Allgather of an int");
    world.Barrier();
    Console.WriteLine($"aot rank {world.Rank}: {checks} checks passed, dynamic code {RuntimeFeature.IsDynamicCodeSupported}");

    if (world.Rank == 0)
    {
        Refused(() => world.Send(new Sample { Name = "x" }, next, 6), nameof(Sample));
        Refused(() => world.Send(new[] { new Point(1, 2) }, next, 7), "Point[]");
    }
}, options);

static void Refused(Action send, string type)
{
    try
    {
        send();
        Console.WriteLine($"not refused {type}");
    }
    catch (MpiException e)
    {
        Console.WriteLine($"refused {type}: {e.Message}");
    }
}

internal readonly record struct Point(int X, int Y);

[Serializable]
internal sealed class Sample
{
    public string? Name;
}

[JsonSerializable(typeof(List<int>))]
internal sealed partial class RankJson : JsonSerializerContext;

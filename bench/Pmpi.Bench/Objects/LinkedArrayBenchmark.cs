using System.Globalization;

namespace Pmpi.Bench.Objects;

/// <summary>One node of Motor's LinkedArray: an int array and the next node. [Serializable], so it goes field by field.</summary>
[Serializable]
public sealed class LinkedArrayNode
{
    public int[] Values = [];
    public LinkedArrayNode? Next;

    /// <summary>A list of <paramref name="nodes"/> nodes holding <paramref name="totalInts"/> ints between them.</summary>
    public static LinkedArrayNode Build(int nodes, int totalInts)
    {
        LinkedArrayNode? head = null;
        int perNode = totalInts / nodes;
        for (int i = nodes - 1; i >= 0; i--)
            head = new LinkedArrayNode { Values = [.. Enumerable.Range(i * perNode, perNode)], Next = head };
        return head!;
    }
}

/// <summary>
/// Motor's LinkedArray ping-pong: ranks 0 and 1 bounce a linked list of N nodes, each holding an int array, 4096 ints
/// in all, as one object message; the cost is serializing and rebuilding N + N objects. bench/linkedarray.py is the
/// same with mpi4py's pickle-based send/recv. Rank 0 prints <c>nodes\thalf_rtt_us</c> per list.
/// </summary>
public static class LinkedArrayBenchmark
{
    /// <summary>The lists: 4096 ints in 256 nodes of 16, and in 4096 nodes of 1.</summary>
    public static readonly int[] NodeCounts = [256, 4096];

    public const int TotalInts = 4096;

    public static void Run(Intracommunicator world, TextWriter output, int iterations)
    {
        ArgumentNullException.ThrowIfNull(world);
        ArgumentNullException.ThrowIfNull(output);
        if (world.Size != 2) throw new ArgumentException($"The ping-pong needs exactly 2 ranks; this world has {world.Size}.", nameof(world));
        foreach (int nodes in NodeCounts)
        {
            var list = LinkedArrayNode.Build(nodes, TotalInts);
            int warm = iterations / 10;
            double t0 = 0;
            for (int i = 0; i < iterations + warm; i++)
            {
                if (i == warm)
                {
                    world.Barrier();
                    t0 = Environment.Time;
                }
                if (world.Rank == 0)
                {
                    world.Send(list, 1, 0);
                    list = world.Receive<LinkedArrayNode>(1, 0);
                }
                else
                {
                    list = world.Receive<LinkedArrayNode>(0, 0);
                    world.Send(list, 0, 0);
                }
            }
            double half = (Environment.Time - t0) / iterations / 2;
            if (world.Rank == 0)
            {
                Check(list, nodes);
                output.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{nodes}\t{half * 1e6:F1}"));
                output.Flush();
            }
        }
    }

    // The list that came back must be the one sent: every value in order.
    private static void Check(LinkedArrayNode list, int nodes)
    {
        int expected = 0, count = 0;
        for (var node = list; node is not null; node = node.Next, count++)
            foreach (int value in node.Values)
                if (value != expected++) throw new InvalidOperationException($"The list came back changed at value {expected - 1}.");
        if (count != nodes || expected != TotalInts) throw new InvalidOperationException($"The list came back with {count} nodes and {expected} values.");
    }
}

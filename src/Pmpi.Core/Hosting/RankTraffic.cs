using Pmpi.Devices;

namespace Pmpi.Hosting;

/// <summary>
/// What one rank has sent, by the kind of link that carried it, for its meters (<see cref="RankMeters"/>). Counted
/// with plain increments, as MPI tools' performance variables are: a send costs no atomic operation, and sends to
/// one peer from several threads at once may miss a count.
/// </summary>
internal sealed class RankTraffic
{
    private static readonly int Kinds = Enum.GetValues<LinkKind>().Length;

    private readonly long[] _messages = new long[Kinds];
    private readonly long[] _bytes = new long[Kinds];

    /// <summary>Counts one message of <paramref name="bytes"/> payload bytes handed to a link of <paramref name="kind"/>.</summary>
    public void Sent(LinkKind kind, int bytes)
    {
        _messages[(int)kind]++;
        _bytes[(int)kind] += bytes;
    }

    /// <summary>Messages sent over links of <paramref name="kind"/>.</summary>
    public long MessagesSent(LinkKind kind) => Volatile.Read(ref _messages[(int)kind]);

    /// <summary>Payload bytes sent over links of <paramref name="kind"/>.</summary>
    public long BytesSent(LinkKind kind) => Volatile.Read(ref _bytes[(int)kind]);
}

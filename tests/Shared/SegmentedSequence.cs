using System.Buffers;

namespace Pmpi.Tests.Shared;

/// <summary>Bytes as a sequence of small segments, as a pipe may hand them over, for parsers that must cope with any split.</summary>
internal static class SegmentedSequence
{
    public static ReadOnlySequence<byte> Of(byte[] bytes, int segmentSize)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(segmentSize);
        Segment? first = null, last = null;
        for (int offset = 0; offset < bytes.Length; offset += segmentSize)
        {
            var memory = bytes.AsMemory(offset, Math.Min(segmentSize, bytes.Length - offset));
            last = last is null ? first = new Segment(memory, 0) : last.Append(memory);
        }
        return first is null ? ReadOnlySequence<byte>.Empty : new ReadOnlySequence<byte>(first, 0, last!, last!.Memory.Length);
    }

    private sealed class Segment : ReadOnlySequenceSegment<byte>
    {
        public Segment(ReadOnlyMemory<byte> memory, long runningIndex)
        {
            Memory = memory;
            RunningIndex = runningIndex;
        }

        public Segment Append(ReadOnlyMemory<byte> memory)
        {
            var next = new Segment(memory, RunningIndex + Memory.Length);
            Next = next;
            return next;
        }
    }
}

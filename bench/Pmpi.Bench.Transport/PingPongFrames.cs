using Google.Protobuf;
using Pmpi.Rpc.V1;

namespace Pmpi.Bench.Transport;

/// <summary>The messages both ping-pongs carry: a Hello to open the call, then one Data frame of N payload bytes each way.</summary>
public static class PingPongFrames
{
    public static Frame Hello { get; } = new() { Hello = new Hello { JobId = "bench", JobToken = "bench", SourceWorldRank = 0, DestinationWorldRank = 1 } };

    public static byte[] Payload(int size)
    {
        var payload = new byte[size];
        Array.Fill(payload, (byte)1);
        return payload;
    }

    /// <summary>The Data frame of <paramref name="size"/> payload bytes for gRPC for .NET, the payload wrapped, not copied.</summary>
    public static Frame Data(byte[] payload)
    {
        var data = Header(payload.Length);
        data.Payload = UnsafeByteOperations.UnsafeWrap(payload);
        return new Frame { Data = data };
    }

    /// <summary>
    /// The same frame's bytes up to its payload (Frame.data's tag and length, Data's other fields, Data.payload's tag
    /// and length), for <see cref="Pmpi.Rpc.Streams.GrpcStream.Write(ReadOnlySpan{byte}, ReadOnlySpan{byte})"/>'s head:
    /// head and payload together are the encoded Frame.
    /// </summary>
    public static byte[] DataHead(int size)
    {
        var fields = Header(size);
        int dataLength = fields.CalculateSize() + CodedOutputStream.ComputeTagSize(Pmpi.Rpc.V1.Data.PayloadFieldNumber) + CodedOutputStream.ComputeLengthSize(size) + size;
        using var head = new MemoryStream();
        using (var output = new CodedOutputStream(head, leaveOpen: true))
        {
            output.WriteTag(Frame.DataFieldNumber, WireFormat.WireType.LengthDelimited);
            output.WriteLength(dataLength);
            fields.WriteTo(output);
            output.WriteTag(Pmpi.Rpc.V1.Data.PayloadFieldNumber, WireFormat.WireType.LengthDelimited);
            output.WriteLength(size);
        }
        return head.ToArray();
    }

    /// <summary>Throws unless <see cref="DataHead"/> and the payload encode the frame <see cref="Data"/> makes.</summary>
    public static void Check(int size)
    {
        byte[] payload = Payload(size);
        if (!Frame.Parser.ParseFrom([.. DataHead(size), .. payload]).Equals(Data(payload)))
            throw new InvalidOperationException($"The {size}-byte Data frame's head does not encode the frame.");
    }

    private static Data Header(int size) => new() { Context = 2, Source = 0, Tag = 1, Sequence = 1, TotalLength = size };
}

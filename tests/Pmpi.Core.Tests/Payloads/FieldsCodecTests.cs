using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Tests.PointToPoint;

namespace Pmpi.Tests.Payloads;

/// <summary>The field-based format against payloads a broken or hostile peer could send: each is a Serialization error, never a crash or a huge allocation.</summary>
public class FieldsCodecTests
{
    private static readonly Codec<Node> NodeCodec = Codec<Node>.Instance;

    [Fact]
    public void Decode_EveryTruncation_ThrowsSerializationError()
    {
        var bytes = Encode(new Node { Value = 1, Next = new Node { Value = 2 } });

        for (int length = 0; length < bytes.Length; length++)
        {
            var error = Assert.Throws<MpiException>(() => Decode(bytes[..length]));
            Assert.Equal(ErrorClass.Serialization, error.ErrorClass);
        }
        Assert.Equal(2, Decode(bytes).Next!.Value);
    }

    [Fact]
    public void Decode_OtherLayoutFingerprint_SaysTheTypesDiffer()
    {
        var bytes = Encode(new Node());
        bytes[0] ^= 0xFF;

        var error = Assert.Throws<MpiException>(() => Decode(bytes));

        Assert.Contains("has other fields than the receiver's", error.Message);
    }

    [Fact]
    public void Decode_HugeArrayLength_IsRefusedBeforeAllocating()
    {
        // Fingerprint, a new Drawing, then its fields by name: ByName null, Layers null, Shapes a new array whose
        // length claims 2^31 - 1 elements, far more than the bytes left.
        var fingerprint = Encode(new Drawing())[..8];
        byte[] hostile = [.. fingerprint, 1, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF, 0x07];

        var error = Assert.Throws<MpiException>(() => Codec<Drawing>.Instance.Decode(Message(hostile, Codec<Drawing>.Instance.Type), PayloadSettings.Default));

        Assert.Equal(ErrorClass.Serialization, error.ErrorClass);
        Assert.Contains("exceeds the", error.Message);
    }

    [Fact]
    public void Decode_BackReferenceToUnknownObject_ThrowsSerializationError()
    {
        var fingerprint = Encode(new Node())[..8];
        byte[] hostile = [.. fingerprint, 2, 5];

        var error = Assert.Throws<MpiException>(() => Decode(hostile));

        Assert.Contains("back-reference to object 5 of 0", error.Message);
    }

    private static byte[] Encode<T>(T value)
    {
        var payload = Codec<T>.Instance.Encode(value, PayloadSettings.Default);
        return payload.Bytes.ToArray();
    }

    private static Node Decode(byte[] bytes) => NodeCodec.Decode(Message(bytes, NodeCodec.Type), PayloadSettings.Default);

    private static Message Message(byte[] bytes, PayloadType type) => new(new Envelope(0, 0, 0), type, bytes);
}

using Pmpi.Rpc.Streams;

namespace Pmpi.Rpc.Tests.Streams;

/// <summary>HPACK decoding against RFC 7541's own examples (Appendix C), and the Huffman code both ways.</summary>
public sealed class HpackTests
{
    [Fact]
    public void Decode_Rfc7541C4_RequestsWithHuffmanAndTheDynamicTable()
    {
        var decoder = new HpackDecoder();

        // C.4.1, C.4.2, C.4.3: three requests on one connection; the second and third refer to entries the first added.
        Assert.Equal([(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")],
            Decode(decoder, "828684418cf1e3c2e5f23a6ba0ab90f4ff"));
        Assert.Equal([(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com"), ("cache-control", "no-cache")],
            Decode(decoder, "828684be5886a8eb10649cbf"));
        Assert.Equal([(":method", "GET"), (":scheme", "https"), (":path", "/index.html"), (":authority", "www.example.com"), ("custom-key", "custom-value")],
            Decode(decoder, "828785bf408825a849e95ba97d7f8925a849e95bb8e8b4bf"));
    }

    [Fact]
    public void Decode_Rfc7541C3_RequestsWithoutHuffman()
    {
        var decoder = new HpackDecoder();

        Assert.Equal([(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com")],
            Decode(decoder, "828684410f7777772e6578616d706c652e636f6d"));
        Assert.Equal([(":method", "GET"), (":scheme", "http"), (":path", "/"), (":authority", "www.example.com"), ("cache-control", "no-cache")],
            Decode(decoder, "828684be58086e6f2d6361636865"));
    }

    [Fact]
    public void Encoder_RoundTripsThroughTheDecoder()
    {
        var block = new List<byte>();
        (string, string)[] fields = [(":method", "POST"), (":scheme", "https"), (":path", "/pmpi.v1.RankTransport/Connect"), (":status", "200"),
            ("grpc-message", new string('x', 300)), ("x-pmpi-proof", "é ü")];
        foreach (var (name, value) in fields) HpackEncoder.Write(block, name, value);

        Assert.Equal(fields, Decode(new HpackDecoder(), Convert.ToHexString([.. block])));
    }

    [Fact]
    public void Huffman_EveryByteValue_RoundTrips()
    {
        var text = Enumerable.Range(0, 256).Select(b => (byte)b).ToArray();
        var decoded = HuffmanCode.Decode(Encode(text));

        Assert.Equal(System.Text.Encoding.UTF8.GetString(text), decoded);
    }

    [Fact]
    public void Huffman_KnownCodes_MatchRfc7541AppendixB()
    {
        Assert.Equal((0x0u, 5), HuffmanCode.Of('0'));
        Assert.Equal((0x3u, 5), HuffmanCode.Of('a'));
        Assert.Equal((0x1ff8u, 13), HuffmanCode.Of(0));
        Assert.Equal((0x7fffd8u, 23), HuffmanCode.Of(1));
        Assert.Equal((0x3fffffffu, 30), HuffmanCode.Of(256)); // EOS
    }

    [Theory]
    [InlineData("ff")] // 8 bits of padding: more than 7
    [InlineData("fe")] // padding that is not all ones
    [InlineData("ffffffff")] // EOS (30 ones) inside the string
    public void Huffman_BadPaddingOrEos_IsACompressionError(string hex)
    {
        var error = Assert.Throws<Http2ProtocolException>(() => HuffmanCode.Decode(Convert.FromHexString(hex)));
        Assert.Equal(Http2Error.CompressionError, error.Code);
    }

    [Fact]
    public void Decode_IndexBeyondBothTables_IsACompressionError()
    {
        var error = Assert.Throws<Http2ProtocolException>(() => new HpackDecoder().Decode([0xFF, 0x00], []));
        Assert.Equal(Http2Error.CompressionError, error.Code);
        Assert.Contains("index", error.Message);
    }

    private static List<(string, string)> Decode(HpackDecoder decoder, string hex)
    {
        var headers = new List<(string Name, string Value)>();
        decoder.Decode(Convert.FromHexString(hex), headers);
        return headers;
    }

    private static byte[] Encode(byte[] text)
    {
        var bits = new List<bool>();
        foreach (byte symbol in text)
        {
            var (code, length) = HuffmanCode.Of(symbol);
            for (int bit = length - 1; bit >= 0; bit--) bits.Add((code >> bit & 1) == 1);
        }
        while (bits.Count % 8 != 0) bits.Add(true);
        return [.. bits.Chunk(8).Select(octet => (byte)octet.Aggregate(0, (value, bit) => value << 1 | (bit ? 1 : 0)))];
    }
}

using System.Text;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// HPACK (RFC 7541) as a gRPC stream needs it. Encoding writes literals that are never indexed, so this end keeps no
/// dynamic table for its peer to track; decoding takes whatever a conformant peer sends (indexed fields, the dynamic
/// table, Huffman-coded strings) and bounds what it may make this end hold.
/// </summary>
internal sealed class HpackDecoder
{
    /// <summary>The dynamic table size this end announces (SETTINGS_HEADER_TABLE_SIZE's default).</summary>
    public const int MaxTableSize = 4096;

    private readonly List<(string Name, string Value)> _table = []; // newest first
    private int _tableSize;
    private int _tableLimit = MaxTableSize;

    /// <summary>Decodes one header block into <paramref name="headers"/>.</summary>
    /// <exception cref="Http2ProtocolException">The block is not valid HPACK (a COMPRESSION_ERROR).</exception>
    public void Decode(ReadOnlySpan<byte> block, List<(string Name, string Value)> headers)
    {
        int at = 0;
        while (at < block.Length)
        {
            byte first = block[at];
            if ((first & 0x80) != 0)
                headers.Add(Entry(ReadInteger(block, ref at, 7)));
            else if ((first & 0xC0) == 0x40)
                headers.Add(Insert(ReadLiteral(block, ref at, 6)));
            else if ((first & 0xE0) == 0x20)
            {
                int size = ReadInteger(block, ref at, 5);
                if (size > MaxTableSize) throw Error($"a dynamic table size update to {size}, above the {MaxTableSize} announced");
                _tableLimit = size;
                Evict(0);
            }
            else headers.Add(ReadLiteral(block, ref at, 4)); // without indexing (0000) or never indexed (0001)
        }
    }

    private (string, string) ReadLiteral(ReadOnlySpan<byte> block, ref int at, int prefixBits)
    {
        int index = ReadInteger(block, ref at, prefixBits);
        string name = index == 0 ? ReadString(block, ref at) : Entry(index).Name;
        return (name, ReadString(block, ref at));
    }

    private (string Name, string Value) Entry(int index)
    {
        if (index >= 1 && index <= StaticTable.Length) return StaticTable[index - 1];
        int dynamic = index - StaticTable.Length - 1;
        if (index == 0 || dynamic >= _table.Count) throw Error($"header index {index}, which neither table holds");
        return _table[dynamic];
    }

    private (string, string) Insert((string Name, string Value) field)
    {
        int size = EntrySize(field);
        Evict(size);
        if (size <= _tableLimit)
        {
            _table.Insert(0, field);
            _tableSize += size;
        }
        return field;
    }

    private void Evict(int room)
    {
        while (_table.Count > 0 && _tableSize + room > _tableLimit)
        {
            _tableSize -= EntrySize(_table[^1]);
            _table.RemoveAt(_table.Count - 1);
        }
    }

    private static int EntrySize((string Name, string Value) field) => Encoding.UTF8.GetByteCount(field.Name) + Encoding.UTF8.GetByteCount(field.Value) + 32;

    private static string ReadString(ReadOnlySpan<byte> block, ref int at)
    {
        if (at >= block.Length) throw Error("a string cut off");
        bool huffman = (block[at] & 0x80) != 0;
        int length = ReadInteger(block, ref at, 7);
        if (length > block.Length - at) throw Error("a string longer than its block");
        var bytes = block.Slice(at, length);
        at += length;
        return huffman ? HuffmanCode.Decode(bytes) : Encoding.UTF8.GetString(bytes);
    }

    private static int ReadInteger(ReadOnlySpan<byte> block, ref int at, int prefixBits)
    {
        int limit = (1 << prefixBits) - 1;
        int value = block[at++] & limit;
        if (value < limit) return value;
        for (int shift = 0; ; shift += 7)
        {
            if (at >= block.Length || shift > 21) throw Error("an integer cut off or too large");
            byte next = block[at++];
            value += (next & 0x7F) << shift;
            if ((next & 0x80) == 0) return value;
        }
    }

    private static Http2ProtocolException Error(string what) => new(Http2Error.CompressionError, $"HPACK: {what}.");

    /// <summary>RFC 7541 Appendix A.</summary>
    private static readonly (string Name, string Value)[] StaticTable =
    [
        (":authority", ""), (":method", "GET"), (":method", "POST"), (":path", "/"), (":path", "/index.html"),
        (":scheme", "http"), (":scheme", "https"), (":status", "200"), (":status", "204"), (":status", "206"),
        (":status", "304"), (":status", "400"), (":status", "404"), (":status", "500"), ("accept-charset", ""),
        ("accept-encoding", "gzip, deflate"), ("accept-language", ""), ("accept-ranges", ""), ("accept", ""),
        ("access-control-allow-origin", ""), ("age", ""), ("allow", ""), ("authorization", ""), ("cache-control", ""),
        ("content-disposition", ""), ("content-encoding", ""), ("content-language", ""), ("content-length", ""),
        ("content-location", ""), ("content-range", ""), ("content-type", ""), ("cookie", ""), ("date", ""),
        ("etag", ""), ("expect", ""), ("expires", ""), ("from", ""), ("host", ""), ("if-match", ""),
        ("if-modified-since", ""), ("if-none-match", ""), ("if-range", ""), ("if-unmodified-since", ""),
        ("last-modified", ""), ("link", ""), ("location", ""), ("max-forwards", ""), ("proxy-authenticate", ""),
        ("proxy-authorization", ""), ("range", ""), ("referer", ""), ("refresh", ""), ("retry-after", ""),
        ("server", ""), ("set-cookie", ""), ("strict-transport-security", ""), ("transfer-encoding", ""),
        ("user-agent", ""), ("vary", ""), ("via", ""), ("www-authenticate", ""),
    ];
}

/// <summary>Writes header blocks of literals never indexed and plain (not Huffman-coded) strings.</summary>
internal static class HpackEncoder
{
    /// <summary>Appends a field: ":method POST" and ":status 200" by their static index, anything else as a literal.</summary>
    public static void Write(List<byte> block, string name, string value)
    {
        switch ((name, value))
        {
            case (":method", "POST"): block.Add(0x83); return;
            case (":scheme", "http"): block.Add(0x86); return;
            case (":scheme", "https"): block.Add(0x87); return;
            case (":status", "200"): block.Add(0x88); return;
        }
        block.Add(0x10); // never indexed, new name: nothing of it enters the peer's dynamic table
        WriteString(block, name);
        WriteString(block, value);
    }

    private static void WriteString(List<byte> block, string text)
    {
        var bytes = Encoding.UTF8.GetBytes(text);
        WriteInteger(block, 0x00, 7, bytes.Length);
        block.AddRange(bytes);
    }

    private static void WriteInteger(List<byte> block, byte flags, int prefixBits, int value)
    {
        int limit = (1 << prefixBits) - 1;
        if (value < limit)
        {
            block.Add((byte)(flags | value));
            return;
        }
        block.Add((byte)(flags | limit));
        for (value -= limit; value >= 0x80; value >>= 7) block.Add((byte)(value & 0x7F | 0x80));
        block.Add((byte)value);
    }
}

/// <summary>
/// The Huffman code of HPACK strings (RFC 7541 Appendix B). It is canonical: codes of one length are consecutive in
/// symbol order, each length's first code following the previous length's last, so the lengths alone define it.
/// </summary>
internal static class HuffmanCode
{
    /// <summary>The code length of each symbol, 0–255 and 256 (EOS), from RFC 7541 Appendix B.</summary>
    private static ReadOnlySpan<byte> Lengths =>
    [
        13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28,
        6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10,
        13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6,
        15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13, 28,
        20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24,
        22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23,
        26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27,
        20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26,
        30,
    ];

    private const int MaxLength = 30, Eos = 256;

    // Per length: the first canonical code of that length, and where its symbols start in Symbols.
    private static readonly uint[] FirstCode = new uint[MaxLength + 2];
    private static readonly int[] FirstIndex = new int[MaxLength + 2];
    private static readonly int[] Count = new int[MaxLength + 2];
    private static readonly short[] Symbols = new short[257]; // by length, then symbol

    static HuffmanCode()
    {
        var lengths = Lengths;
        for (int symbol = 0; symbol <= Eos; symbol++) Count[lengths[symbol]]++;
        uint code = 0;
        int index = 0;
        for (int length = 1; length <= MaxLength; length++)
        {
            FirstCode[length] = code;
            FirstIndex[length] = index;
            for (int symbol = 0; symbol <= Eos; symbol++)
                if (lengths[symbol] == length) Symbols[index++] = (short)symbol;
            code = (code + (uint)Count[length]) << 1;
        }
    }

    /// <summary>The code of <paramref name="symbol"/> and its length in bits (for tests, which encode with it).</summary>
    public static (uint Code, int Length) Of(int symbol)
    {
        int length = Lengths[symbol];
        int rank = Array.IndexOf(Symbols, (short)symbol, FirstIndex[length], Count[length]) - FirstIndex[length];
        return (FirstCode[length] + (uint)rank, length);
    }

    /// <exception cref="Http2ProtocolException">Not a valid Huffman-coded string: EOS inside it, or padding that is not a prefix of EOS.</exception>
    public static string Decode(ReadOnlySpan<byte> coded)
    {
        var decoded = new List<byte>(coded.Length * 8 / 5);
        uint code = 0;
        int length = 0;
        foreach (byte value in coded)
        {
            for (int bit = 7; bit >= 0; bit--)
            {
                code = code << 1 | (uint)(value >> bit & 1);
                length++;
                uint offset = code - FirstCode[length];
                if (code >= FirstCode[length] && offset < Count[length])
                {
                    int symbol = Symbols[FirstIndex[length] + (int)offset];
                    if (symbol == Eos) throw new Http2ProtocolException(Http2Error.CompressionError, "HPACK: EOS inside a Huffman-coded string.");
                    decoded.Add((byte)symbol);
                    code = 0;
                    length = 0;
                }
                else if (length == MaxLength) throw new Http2ProtocolException(Http2Error.CompressionError, "HPACK: not a Huffman code.");
            }
        }
        // What is left is padding: fewer than 8 bits, all ones (the start of EOS).
        if (length >= 8 || code != (1u << length) - 1) throw new Http2ProtocolException(Http2Error.CompressionError, "HPACK: bad padding after a Huffman-coded string.");
        return Encoding.UTF8.GetString(decoded.ToArray());
    }
}

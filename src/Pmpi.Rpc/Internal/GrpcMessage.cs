using System.Text;

namespace Pmpi.Rpc.Internal;

/// <summary>
/// The grpc-message header's percent-encoding (PROTOCOL-HTTP2.md): UTF-8 bytes, each outside printable ASCII
/// 0x20-0x7E or equal to '%' written as %XX. Decoding is lenient: a malformed escape stays as it is.
/// </summary>
internal static class GrpcMessage
{
    public static string Encode(string text)
    {
        bool plain = true;
        foreach (char c in text)
        {
            if (c is < ' ' or > '~' or '%')
            {
                plain = false;
                break;
            }
        }
        if (plain) return text;
        var builder = new StringBuilder(text.Length + 16);
        foreach (byte b in Encoding.UTF8.GetBytes(text))
        {
            if (b is < 0x20 or > 0x7E or (byte)'%') builder.Append('%').Append(b.ToString("X2", System.Globalization.CultureInfo.InvariantCulture));
            else builder.Append((char)b);
        }
        return builder.ToString();
    }

    public static string Decode(string text)
    {
        if (!text.Contains('%', StringComparison.Ordinal)) return text;
        var bytes = new List<byte>(text.Length);
        for (int i = 0; i < text.Length; i++)
        {
            if (text[i] == '%' && i + 2 < text.Length && IsHex(text[i + 1]) && IsHex(text[i + 2]))
            {
                bytes.Add((byte)(HexValue(text[i + 1]) * 16 + HexValue(text[i + 2])));
                i += 2;
            }
            else
            {
                // Header values are ASCII; anything else passes through as UTF-8.
                bytes.AddRange(Encoding.UTF8.GetBytes(text[i].ToString()));
            }
        }
        return Encoding.UTF8.GetString(bytes.ToArray());
    }

    private static bool IsHex(char c) => char.IsAsciiHexDigit(c);

    private static int HexValue(char c) => c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

using System.Text;

namespace Pmpi.Rpc.Internal;

/// <summary>
/// The grpc-message header's percent-encoding (PROTOCOL-HTTP2.md): UTF-8 bytes, each outside printable ASCII
/// 0x20-0x7E or equal to '%' written as %XX.
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
}

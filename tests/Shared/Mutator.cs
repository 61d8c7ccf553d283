namespace Pmpi.Tests.Shared;

/// <summary>
/// Seeded mutations of bytes and text: bit flips, random and boundary bytes, insertions, deletions, duplications,
/// truncations and, for text, tokens that matter to XML and to PMPI's number fields. The same seed gives the same
/// sequence, so a failing seed reproduces.
/// </summary>
internal sealed class Mutator(int seed)
{
    private static readonly byte[] Boundaries = [0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE];

    private static readonly string[] Tokens =
    [
        "<", ">", "\"", "'", "&", "&amp;", "&#0;", "]]>", "<!--", "-->", "<!DOCTYPE x [<!ENTITY a \"aaaa\">]>", "&a;",
        "99999999999", "-1", "0", "2147483647", "-2147483648", "1e9", " count=\"1000000\"", " slots=\"0\"",
        "<ranks program=\"/nonexistent/fuzz.dll\" count=\"2\"/>", "<node name=\"n\" agent=\"127.0.0.1:1\"/>",
        "</computation>", "<computation>", "xmlns=\"urn:other\"", "\u00e9", "\ud83d\ude00", "\t", "\r\n", "<?xml version=\"1.0\"?>",
    ];

    public Random Random { get; } = new(seed);

    /// <summary>One to four mutations of <paramref name="input"/>.</summary>
    public byte[] Mutate(ReadOnlySpan<byte> input)
    {
        var bytes = new List<byte>(input.ToArray());
        int rounds = Random.Next(1, 5);
        for (int i = 0; i < rounds; i++)
        {
            int at = bytes.Count == 0 ? 0 : Random.Next(bytes.Count);
            switch (Random.Next(7))
            {
                case 0 when bytes.Count > 0:
                    bytes[at] ^= (byte)(1 << Random.Next(8));
                    break;
                case 1 when bytes.Count > 0:
                    bytes[at] = Boundaries[Random.Next(Boundaries.Length)];
                    break;
                case 2:
                    var inserted = new byte[Random.Next(1, 16)];
                    Random.NextBytes(inserted);
                    bytes.InsertRange(at, inserted);
                    break;
                case 3 when bytes.Count > 0:
                    bytes.RemoveRange(at, Math.Min(Random.Next(1, 16), bytes.Count - at));
                    break;
                case 4 when bytes.Count > 0:
                    int length = Math.Min(Random.Next(1, 64), bytes.Count - at);
                    bytes.InsertRange(at, bytes.GetRange(at, length));
                    break;
                case 5:
                    bytes.RemoveRange(at, bytes.Count - at);
                    break;
                default:
                    if (bytes.Count > 0) bytes[at] = (byte)Random.Next(256);
                    break;
            }
        }
        return [.. bytes];
    }

    /// <summary>One to four mutations of <paramref name="text"/>.</summary>
    public string Mutate(string text)
    {
        var builder = new System.Text.StringBuilder(text);
        int rounds = Random.Next(1, 5);
        for (int i = 0; i < rounds; i++)
        {
            int at = builder.Length == 0 ? 0 : Random.Next(builder.Length);
            switch (Random.Next(5))
            {
                case 0:
                    builder.Insert(at, Tokens[Random.Next(Tokens.Length)]);
                    break;
                case 1 when builder.Length > 0:
                    builder.Remove(at, Math.Min(Random.Next(1, 12), builder.Length - at));
                    break;
                case 2 when builder.Length > 0:
                    int length = Math.Min(Random.Next(1, 80), builder.Length - at);
                    builder.Insert(at, builder.ToString(at, length));
                    break;
                case 3 when builder.Length > 0:
                    builder[at] = (char)Random.Next(0x20, 0x7F);
                    break;
                default:
                    builder.Insert(at, (char)Random.Next(0, 0x3000));
                    break;
            }
        }
        return builder.ToString();
    }
}

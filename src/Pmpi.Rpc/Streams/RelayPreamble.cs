using System.Buffers.Binary;
using System.Text;
using Grpc.Core;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Streams;

/// <summary>
/// What a rank writes first on a plain TCP connection to a gateway's port to have it relayed, opaque, to a rank of
/// another domain (docs/architecture.md, "Gateways"): the route and its <see cref="RouteProof"/>. The gateway checks
/// it, opens the next hop (the peer gateway, which gets the same preamble, or the destination rank's endpoint), and
/// answers one <see cref="RelayReply"/>; after an OK the connection carries the rank's own TLS and HTTP/2, byte for
/// byte. The wire, all integers big-endian:
/// <code>
/// "PMPIRLY1"          8 bytes; neither a TLS record (0x16) nor HTTP/2's preface ("PRI "), so one port serves all three
/// length             u16, of what follows (at most <see cref="MaxBodyLength"/>)
/// job id             u8 length, UTF-8
/// source rank        i32
/// destination rank   i32
/// proof              u8 length, ASCII (RouteProof's base64)
/// </code>
/// </summary>
/// <param name="JobId">The job.</param>
/// <param name="Source">The calling world rank.</param>
/// <param name="Destination">The world rank the stream is for.</param>
/// <param name="Proof">RouteProof.Compute under the job key.</param>
public sealed record RelayPreamble(string JobId, int Source, int Destination, string Proof)
{
    /// <summary>The preamble's first bytes.</summary>
    public static ReadOnlySpan<byte> Magic => "PMPIRLY1"u8;

    /// <summary>The most the body after the magic and length may be: a job id and a proof of up to 255 bytes each.</summary>
    public const int MaxBodyLength = 1 + 255 + 4 + 4 + 1 + 255;

    /// <summary>The most a whole preamble may be.</summary>
    public const int MaxLength = 8 + 2 + MaxBodyLength;

    /// <summary>The preamble of a stream of <paramref name="jobId"/> from <paramref name="source"/> to <paramref name="destination"/>, proved with <paramref name="jobToken"/>.</summary>
    public static RelayPreamble For(string jobToken, string jobId, int source, int destination) =>
        new(jobId, source, destination, RouteProof.Compute(jobToken, jobId, source, destination));

    /// <summary>The preamble's bytes.</summary>
    /// <exception cref="ArgumentException">The job id or the proof is longer than 255 bytes, or a rank is negative.</exception>
    public byte[] ToBytes()
    {
        int jobLength = Encoding.UTF8.GetByteCount(JobId), proofLength = Encoding.ASCII.GetByteCount(Proof);
        if (jobLength is 0 or > 255 || proofLength is 0 or > 255) throw new ArgumentException("A relayed stream's job id and proof are 1-255 bytes each.");
        if (Source < 0 || Destination < 0) throw new ArgumentException("World ranks are not negative.");
        int body = 1 + jobLength + 4 + 4 + 1 + proofLength;
        var bytes = new byte[8 + 2 + body];
        Magic.CopyTo(bytes);
        var rest = bytes.AsSpan(8);
        BinaryPrimitives.WriteUInt16BigEndian(rest, (ushort)body);
        rest[2] = (byte)jobLength;
        Encoding.UTF8.GetBytes(JobId, rest[3..]);
        rest = rest[(3 + jobLength)..];
        BinaryPrimitives.WriteInt32BigEndian(rest, Source);
        BinaryPrimitives.WriteInt32BigEndian(rest[4..], Destination);
        rest[8] = (byte)proofLength;
        Encoding.ASCII.GetBytes(Proof, rest[9..]);
        return bytes;
    }

    /// <summary>Whether <paramref name="start"/> (the first bytes received, maybe fewer than the magic) can still be a preamble.</summary>
    public static bool MayStart(ReadOnlySpan<byte> start) => Magic.StartsWith(start[..Math.Min(start.Length, Magic.Length)]);

    /// <summary>
    /// Reads a preamble from the start of <paramref name="input"/>: false with an empty <paramref name="malformed"/>
    /// when more bytes are needed (<paramref name="needed"/> says how many in all), false with the reason when the
    /// bytes cannot be one.
    /// </summary>
    public static bool TryRead(ReadOnlySpan<byte> input, out RelayPreamble preamble, out int needed, out string malformed)
    {
        preamble = null!;
        malformed = "";
        needed = 10;
        if (!MayStart(input))
        {
            malformed = "the connection does not start with a relay preamble";
            return false;
        }
        if (input.Length < needed) return false;
        int body = BinaryPrimitives.ReadUInt16BigEndian(input[8..]);
        if (body > MaxBodyLength)
        {
            malformed = $"the preamble states {body} bytes, more than {MaxBodyLength}";
            return false;
        }
        needed = 10 + body;
        if (input.Length < needed) return false;
        var rest = input[10..needed];
        int jobLength = rest[0];
        if (jobLength == 0 || rest.Length < 1 + jobLength + 9)
        {
            malformed = "the preamble's job id is empty or runs past its end";
            return false;
        }
        string jobId;
        try
        {
            jobId = new UTF8Encoding(false, throwOnInvalidBytes: true).GetString(rest.Slice(1, jobLength));
        }
        catch (DecoderFallbackException)
        {
            malformed = "the preamble's job id is not UTF-8";
            return false;
        }
        rest = rest[(1 + jobLength)..];
        int source = BinaryPrimitives.ReadInt32BigEndian(rest), destination = BinaryPrimitives.ReadInt32BigEndian(rest[4..]);
        int proofLength = rest[8];
        if (source < 0 || destination < 0)
        {
            malformed = $"the preamble's ranks ({source} -> {destination}) are not world ranks";
            return false;
        }
        if (proofLength == 0 || rest.Length != 9 + proofLength)
        {
            malformed = "the preamble's proof is empty or does not end where the preamble does";
            return false;
        }
        preamble = new RelayPreamble(jobId, source, destination, Encoding.ASCII.GetString(rest.Slice(9, proofLength)));
        return true;
    }
}

/// <summary>
/// A gateway's answer to a <see cref="RelayPreamble"/>: a status (a gRPC <see cref="StatusCode"/> in one byte, OK when
/// the stream is relayed from the next byte on), and for a refusal a reason, u16 big-endian length and UTF-8, after which
/// the gateway closes the connection.
/// </summary>
public static class RelayReply
{
    /// <summary>The most a reason may be.</summary>
    public const int MaxReasonLength = 2048;

    /// <summary>The bytes of an OK.</summary>
    public static ReadOnlySpan<byte> Ok => [0, 0, 0];

    /// <summary>The bytes of a refusal with <paramref name="code"/> and <paramref name="reason"/> (cut to <see cref="MaxReasonLength"/> bytes).</summary>
    public static byte[] Refusal(StatusCode code, string reason)
    {
        var text = Encoding.UTF8.GetBytes(reason);
        int length = Math.Min(text.Length, MaxReasonLength);
        var bytes = new byte[3 + length];
        bytes[0] = (byte)code;
        BinaryPrimitives.WriteUInt16BigEndian(bytes.AsSpan(1), (ushort)length);
        text.AsSpan(0, length).CopyTo(bytes.AsSpan(3));
        return bytes;
    }

    /// <summary>Reads a reply: false while more bytes are needed (<paramref name="needed"/> says how many in all).</summary>
    /// <exception cref="RpcException">UNAVAILABLE: the bytes are not a reply (what answered is no PMPI gateway).</exception>
    public static bool TryRead(ReadOnlySpan<byte> input, out StatusCode code, out string reason, out int needed)
    {
        code = StatusCode.Unknown;
        reason = "";
        needed = 3;
        if (input.Length < needed) return false;
        int length = BinaryPrimitives.ReadUInt16BigEndian(input[1..]);
        if (input[0] > (byte)StatusCode.Unauthenticated || length > MaxReasonLength || (input[0] == 0 && length != 0))
            throw new RpcException(new Status(StatusCode.Unavailable, "What answered the relay preamble is not a PMPI gateway (its reply is malformed)."));
        needed = 3 + length;
        if (input.Length < needed) return false;
        code = (StatusCode)input[0];
        reason = Encoding.UTF8.GetString(input.Slice(3, length));
        return true;
    }
}

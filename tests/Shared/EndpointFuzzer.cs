using System.Buffers.Binary;
using System.Net;
using System.Net.Http.Headers;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using Google.Protobuf;

namespace Pmpi.Tests.Shared;

/// <summary>One method of an endpoint and a valid request for it, the starting point of the mutations.</summary>
internal sealed record FuzzSeed(string Path, IMessage Request);

/// <summary>
/// Sends an endpoint mutated calls, each answered or refused however the endpoint likes: mutated protobuf requests in
/// well-framed gRPC calls, mutated gRPC framing, mutated computation files in well-formed Submit calls, and raw HTTP/2
/// connections whose frames (HEADERS with a mutated HPACK block among them) are mutated. Only crashes and hangs of the
/// endpoint count; the caller checks those after the run.
/// </summary>
internal static class EndpointFuzzer
{
    /// <summary>How long one mutated call may take before the fuzzer gives up on it (an endpoint that never answers a call does not hang the run).</summary>
    private static readonly TimeSpan CallTimeout = TimeSpan.FromSeconds(5);

    /// <summary>Runs <paramref name="iterations"/> mutated calls against <paramref name="address"/>; returns how many got an HTTP answer.</summary>
    /// <param name="address">The endpoint.</param>
    /// <param name="seed">Seeds the mutations: the same seed sends the same calls.</param>
    /// <param name="iterations">How many calls.</param>
    /// <param name="seeds">Valid requests, one of which each call starts from.</param>
    /// <param name="mutateText">Builds a valid message around mutated text (a computation file), for the calls that mutate text.</param>
    /// <param name="opening">A valid message every gRPC call sends first (a stream's Hello), so mutations reach what lies behind it.</param>
    /// <param name="tls">For an endpoint that speaks TLS: how to authenticate (a cluster member's certificate), so the mutations reach HTTP/2.</param>
    public static async Task<int> RunAsync(Uri address, int seed, int iterations, IReadOnlyList<FuzzSeed> seeds, Func<Mutator, IMessage?>? mutateText = null,
        IMessage? opening = null, SslClientAuthenticationOptions? tls = null)
    {
        byte[] preamble = opening is null ? [] : Framed(opening.ToByteArray());
        var mutator = new Mutator(seed);
        var handler = new SocketsHttpHandler { UseProxy = false, ConnectTimeout = CallTimeout };
        if (tls is not null) handler.SslOptions = tls;
        using var http = new HttpClient(handler) { Timeout = CallTimeout };
        int answered = 0;
        for (int i = 0; i < iterations; i++)
        {
            var target = seeds[mutator.Random.Next(seeds.Count)];
            byte[] message = target.Request.ToByteArray();
            switch (mutator.Random.Next(4))
            {
                case 0:
                    answered += await CallAsync(http, address, target.Path, [.. preamble, .. Framed(mutator.Mutate(message))]) ? 1 : 0;
                    break;
                case 1:
                    answered += await CallAsync(http, address, target.Path, [.. preamble, .. mutator.Mutate(Framed(message))]) ? 1 : 0;
                    break;
                case 2 when mutateText?.Invoke(mutator) is { } textual:
                    answered += await CallAsync(http, address, target.Path, [.. preamble, .. Framed(textual.ToByteArray())]) ? 1 : 0;
                    break;
                default:
                    await RawHttp2Async(address, target.Path, message, mutator, tls);
                    break;
            }
        }
        return answered;
    }

    /// <summary>The 5-byte gRPC prefix (uncompressed, big-endian length) and the message.</summary>
    private static byte[] Framed(byte[] message)
    {
        var framed = new byte[5 + message.Length];
        BinaryPrimitives.WriteUInt32BigEndian(framed.AsSpan(1), (uint)message.Length);
        message.CopyTo(framed, 5);
        return framed;
    }

    private static async Task<bool> CallAsync(HttpClient http, Uri address, string path, byte[] body)
    {
        var content = new ByteArrayContent(body);
        content.Headers.ContentType = new MediaTypeHeaderValue("application/grpc");
        using var request = new HttpRequestMessage(HttpMethod.Post, new Uri(address, path))
        {
            Version = HttpVersion.Version20,
            VersionPolicy = HttpVersionPolicy.RequestVersionExact,
            Content = content,
        };
        request.Headers.TryAddWithoutValidation("te", "trailers");
        using var timeout = new CancellationTokenSource(CallTimeout);
        try
        {
            using var response = await http.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, timeout.Token);
            await response.Content.CopyToAsync(Stream.Null, timeout.Token);
            return true;
        }
        catch (Exception e) when (e is HttpRequestException or IOException or OperationCanceledException)
        {
            // Refused, reset or still streaming (a mutated Launch or Submit that runs): all fine for the endpoint.
            return false;
        }
    }

    /// <summary>A connection of its own: preface, SETTINGS, then a few frames of which some are mutated.</summary>
    private static async Task RawHttp2Async(Uri address, string path, byte[] message, Mutator mutator, SslClientAuthenticationOptions? tls)
    {
        using var socket = new Socket(AddressFamily.InterNetwork, SocketType.Stream, ProtocolType.Tcp);
        using var timeout = new CancellationTokenSource(CallTimeout);
        try
        {
            await socket.ConnectAsync(IPAddress.Loopback, address.Port, timeout.Token);
            await using Stream stream = tls is null ? new NetworkStream(socket) : new SslStream(new NetworkStream(socket));
            if (stream is SslStream ssl)
            {
                tls!.ApplicationProtocols = [SslApplicationProtocol.Http2];
                tls.TargetHost ??= address.Host;
                await ssl.AuthenticateAsClientAsync(tls, timeout.Token);
            }
            var frames = new List<byte[]>
            {
                "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8.ToArray(),
                Frame(0x4, 0, 0, []),
                Frame(0x1, 0x4, 1, Headers(address, path)),
                Frame(0x0, 0x1, 1, Framed(message)),
            };
            for (int i = 0, extra = mutator.Random.Next(3); i < extra; i++)
            {
                var payload = new byte[mutator.Random.Next(0, 64)];
                mutator.Random.NextBytes(payload);
                frames.Add(Frame((byte)mutator.Random.Next(0, 12), (byte)mutator.Random.Next(256), mutator.Random.Next(0, 8), payload));
            }
            int mutated = mutator.Random.Next(1, frames.Count);
            frames[mutated] = mutator.Mutate(frames[mutated]);
            foreach (var frame in frames) await stream.WriteAsync(frame, timeout.Token);
            var buffer = new byte[16 * 1024];
            using var read = new CancellationTokenSource(TimeSpan.FromMilliseconds(200));
            while (await stream.ReadAsync(buffer, read.Token) > 0)
            {
            }
        }
        catch (Exception e) when (e is SocketException or IOException or OperationCanceledException or System.Security.Authentication.AuthenticationException)
        {
            // Closed, reset, or still open after a short look: the endpoint decides.
        }
    }

    private static byte[] Frame(byte type, byte flags, int stream, byte[] payload)
    {
        var frame = new byte[9 + payload.Length];
        frame[0] = (byte)(payload.Length >> 16);
        frame[1] = (byte)(payload.Length >> 8);
        frame[2] = (byte)payload.Length;
        frame[3] = type;
        frame[4] = flags;
        BinaryPrimitives.WriteInt32BigEndian(frame.AsSpan(5), stream & 0x7FFFFFFF);
        payload.CopyTo(frame, 9);
        return frame;
    }

    /// <summary>A gRPC request's header block in HPACK with literals only (RFC 7541 §6.1, §6.2.2): no dynamic table to get right.</summary>
    private static byte[] Headers(Uri address, string path)
    {
        var block = new List<byte> { 0x83, 0x86 }; // :method POST, :scheme http (static table 3 and 6)
        Literal(block, 4, path);                   // :path
        Literal(block, 1, address.Authority);      // :authority
        block.AddRange([0x0F, 0x10]);              // content-type (static index 31, prefix 4 bits: 15 + 16)
        String(block, "application/grpc");
        block.Add(0x00);                           // te: trailers, a new name
        String(block, "te");
        String(block, "trailers");
        return [.. block];

        static void Literal(List<byte> block, int index, string value)
        {
            block.Add((byte)index);
            String(block, value);
        }

        static void String(List<byte> block, string value)
        {
            var bytes = Encoding.ASCII.GetBytes(value);
            block.Add((byte)bytes.Length); // every value here is shorter than 127 bytes
            block.AddRange(bytes);
        }
    }
}

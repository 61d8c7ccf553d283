using System.Collections.Concurrent;
using System.Globalization;
using System.Net.Http;
using System.Security.Cryptography;
using System.Text;

namespace Pmpi.Rpc.Security.Internal;

/// <summary>
/// h2c on loopback with every request signed (<see cref="RpcSecurity.SignedRequests"/>): the header
/// "pmpi-signature: unix-ms.nonce.mac", mac = HMAC-SHA256(secret, path \n unix-ms \n nonce), accepted once within
/// <see cref="Window"/> of the server's clock.
/// </summary>
internal sealed class SignedRequestSecurity(byte[] secret) : RpcSecurity
{
    public const string Header = "pmpi-signature";

    /// <summary>How far a signature's time may be from the server's; a nonce is remembered twice as long.</summary>
    private static readonly TimeSpan Window = TimeSpan.FromSeconds(30);

    private readonly ConcurrentDictionary<string, long> _seen = new(StringComparer.Ordinal);
    private long _nextPrune;

    public override bool UsesTls => false;

    public override bool LoopbackOnly => true;

    public override string Description => "signed requests (a per-run secret, loopback h2c)";

    internal override ReadOnlySpan<byte> TicketKey => secret;

    internal override void Authenticate(HttpRequestMessage request, string path)
    {
        var time = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds().ToString(CultureInfo.InvariantCulture);
        var nonce = Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(16));
        request.Headers.TryAddWithoutValidation(Header, $"{time}.{nonce}.{Convert.ToBase64String(Mac(path, time, nonce))}");
    }

    internal override bool TryAuthenticate(in CallerEvidence caller, out string failure)
    {
        var value = caller.Signature;
        var parts = value.Split('.');
        if (parts.Length != 3 || !long.TryParse(parts[0], NumberStyles.None, CultureInfo.InvariantCulture, out long time) || parts[1].Length != 32)
        {
            failure = value.Length == 0 ? $"the request carries no {Header}" : $"the {Header} header is malformed";
            return false;
        }
        byte[] mac;
        try
        {
            mac = Convert.FromBase64String(parts[2]);
        }
        catch (FormatException)
        {
            failure = $"the {Header} header is malformed";
            return false;
        }
        if (!CryptographicOperations.FixedTimeEquals(mac, Mac(caller.Path, parts[0], parts[1])))
        {
            failure = "the request's signature is not made with this run's secret";
            return false;
        }
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        if (Math.Abs(now - time) > (long)Window.TotalMilliseconds)
        {
            failure = "the request's signature is outside the 30 s window";
            return false;
        }
        Prune(now);
        if (!_seen.TryAdd(parts[1], time))
        {
            failure = "the request's signature was already used (a replay)";
            return false;
        }
        failure = "";
        return true;
    }

    private byte[] Mac(string path, string time, string nonce) => HMACSHA256.HashData(secret, Encoding.UTF8.GetBytes($"{path}\n{time}\n{nonce}"));

    /// <summary>Forgets nonces too old to pass the window anyway, at most once per window, so the set stays small.</summary>
    private void Prune(long now)
    {
        long next = Interlocked.Read(ref _nextPrune);
        if (now < next || Interlocked.CompareExchange(ref _nextPrune, now + (long)Window.TotalMilliseconds, next) != next) return;
        foreach (var (nonce, time) in _seen)
            if (now - time > 2 * (long)Window.TotalMilliseconds) _seen.TryRemove(nonce, out _);
    }
}

using System.Net.Http;
using System.Net.Sockets;
using System.Security.Authentication;
using Grpc.Core;

namespace Pmpi.Rpc.Client;

/// <summary>
/// Says in plain words why a call to a daemon never reached it: nothing listening, an unknown host, a TLS handshake
/// refused, cleartext to a TLS port. gRPC for .NET reports these as UNAVAILABLE or INTERNAL in its own terms ("Error
/// connecting to subchannel.") and keeps the cause in <see cref="Status.DebugException"/>.
/// </summary>
public static class RpcFailures
{
    /// <summary>Why <paramref name="error"/>'s call to <paramref name="address"/> did not reach the service; null when the service answered it.</summary>
    public static string? Unreached(RpcException error, Uri address)
    {
        ArgumentNullException.ThrowIfNull(error);
        ArgumentNullException.ThrowIfNull(address);
        if (error.StatusCode is not (StatusCode.Unavailable or StatusCode.Internal)) return null;
        string at = address.Authority;
        for (var cause = error.Status.DebugException; cause is not null; cause = cause.InnerException)
        {
            switch (cause)
            {
                case SocketException { SocketErrorCode: SocketError.ConnectionRefused }:
                    return $"nothing listens at {at} (connection refused): no daemon runs on that port there";
                case SocketException { SocketErrorCode: SocketError.HostNotFound or SocketError.NoData or SocketError.TryAgain } unknown:
                    return $"host '{address.Host}' is not known ({unknown.Message})";
                case SocketException { SocketErrorCode: SocketError.TimedOut }:
                    return $"{at} did not answer (connection timed out): a firewall may drop what is sent there";
                case SocketException socket:
                    return $"{at}: {socket.Message}";
                case AuthenticationException tls:
                    return $"the TLS handshake with {at} failed ({tls.Message.TrimEnd('.')}): it is a daemon of another cluster (its "
                        + "certificate is not signed by this credential's CA), one without TLS (--insecure), or not a PMPI daemon";
                case HttpRequestException { HttpRequestError: HttpRequestError.HttpProtocolError or HttpRequestError.InvalidResponse or HttpRequestError.ResponseEnded }
                    when address.Scheme == Uri.UriSchemeHttp:
                    return $"{at} does not speak gRPC in cleartext (--insecure): a daemon with the cluster credential speaks TLS; give the credential instead";
            }
        }
        return null;
    }

    /// <summary>Why <paramref name="error"/>'s call to <paramref name="address"/> failed: <see cref="Unreached"/>, else its status and detail.</summary>
    public static string Describe(RpcException error, Uri address) => Unreached(error, address) ?? $"{error.StatusCode}: {error.Status.Detail}";
}

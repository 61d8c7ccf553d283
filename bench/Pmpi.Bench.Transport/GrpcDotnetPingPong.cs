using System.Diagnostics;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;
using Pmpi.Bench.Transport.V1;
using Pmpi.Rpc;
using Pmpi.Rpc.V1;

namespace Pmpi.Bench.Transport;

/// <summary>
/// The same ping-pong over gRPC for .NET: a Kestrel server (Grpc.AspNetCore.Server) whose Connect writes back each
/// request as it reads it, and a Grpc.Net.Client client over SocketsHttpHandler that writes a Frame and then reads
/// the echo, each round. Windows and message limits as PMPI's own (<see cref="RpcServerLimits.Default"/>, and the
/// 16 MB stream window of the project's control-plane handler), so that neither side waits on flow control where the
/// other does not.
/// </summary>
public sealed class GrpcDotnetPingPong : IPingPong
{
    private const int MaxMessageSize = 64 * 1024 * 1024;
    private readonly WebApplication _server;
    private readonly Uri _address;
    private readonly SslClientAuthenticationOptions? _tls;

    private GrpcDotnetPingPong(WebApplication server, Uri address, SslClientAuthenticationOptions? tls)
    {
        _server = server;
        _address = address;
        _tls = tls;
    }

    public string Name => "gRPC for .NET";

    /// <summary>
    /// h2c, or with <paramref name="tls"/> TLS 1.3 as PMPI's rank endpoints speak it: a self-signed ECDSA P-256
    /// certificate at each end, each end accepting the other's alone.
    /// </summary>
    public static async Task<GrpcDotnetPingPong> StartAsync(bool tls)
    {
        using var serverCertificate = tls ? SelfSigned("server") : null;
        using var clientCertificate = tls ? SelfSigned("client") : null;
        byte[] clientRaw = clientCertificate?.RawData ?? [];
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.Listen(IPAddress.Loopback, 0, listen =>
            {
                listen.Protocols = HttpProtocols.Http2;
                if (serverCertificate is not null)
                {
                    listen.UseHttps(new HttpsConnectionAdapterOptions
                    {
                        ServerCertificate = X509CertificateLoader.LoadPkcs12(serverCertificate.Export(X509ContentType.Pkcs12), null),
                        SslProtocols = SslProtocols.Tls13,
                        ClientCertificateMode = ClientCertificateMode.RequireCertificate,
                        ClientCertificateValidation = (certificate, _, _) => certificate.RawData.AsSpan().SequenceEqual(clientRaw),
                    });
                }
            });
            kestrel.Limits.Http2.InitialConnectionWindowSize = RpcServerLimits.Default.ConnectionWindowSize;
            kestrel.Limits.Http2.InitialStreamWindowSize = RpcServerLimits.Default.StreamWindowSize;
        });
        builder.Services.AddGrpc(grpc =>
        {
            grpc.MaxReceiveMessageSize = MaxMessageSize;
            grpc.MaxSendMessageSize = MaxMessageSize;
        });
        var app = builder.Build();
        app.MapGrpcService<EchoService>();
        await app.StartAsync().ConfigureAwait(false);
        string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();
        SslClientAuthenticationOptions? clientTls = null;
        if (clientCertificate is not null)
        {
            byte[] serverRaw = serverCertificate!.RawData;
            clientTls = new SslClientAuthenticationOptions
            {
                EnabledSslProtocols = SslProtocols.Tls13,
                ClientCertificates = [X509CertificateLoader.LoadPkcs12(clientCertificate.Export(X509ContentType.Pkcs12), null)],
                RemoteCertificateValidationCallback = (_, certificate, _, _) => certificate is not null && certificate.GetRawCertData().AsSpan().SequenceEqual(serverRaw),
            };
        }
        return new GrpcDotnetPingPong(app, new Uri(address), clientTls);
    }

    private static X509Certificate2 SelfSigned(string name)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={name}", key, HashAlgorithmName.SHA256);
        return request.CreateSelfSigned(DateTimeOffset.UtcNow.AddMinutes(-5), DateTimeOffset.UtcNow.AddDays(1));
    }

    public async Task<IPingPongConnection> ConnectAsync(int size)
    {
        var handler = new SocketsHttpHandler
        {
            EnableMultipleHttp2Connections = true,
            UseProxy = false,
            InitialHttp2StreamWindowSize = RpcServerLimits.Default.StreamWindowSize,
        };
        if (_tls is not null) handler.SslOptions = _tls;
        var channel = GrpcChannel.ForAddress(_address, new GrpcChannelOptions
        {
            HttpHandler = handler,
            DisposeHttpClient = true,
            MaxReceiveMessageSize = MaxMessageSize,
            MaxSendMessageSize = MaxMessageSize,
        });
        var call = new RankTransport.RankTransportClient(channel).Connect();
        try
        {
            await call.RequestStream.WriteAsync(PingPongFrames.Hello).ConfigureAwait(false);
            if (!await call.ResponseStream.MoveNext(CancellationToken.None).ConfigureAwait(false))
                throw new InvalidOperationException("The echo ended the call before echoing the Hello.");
            return new Connection(channel, call, size);
        }
        catch
        {
            call.Dispose();
            channel.Dispose();
            throw;
        }
    }

    public async ValueTask DisposeAsync()
    {
        await _server.StopAsync().ConfigureAwait(false);
        await _server.DisposeAsync().ConfigureAwait(false);
    }

    private sealed class EchoService : RankTransport.RankTransportBase
    {
        public override async Task Connect(IAsyncStreamReader<Frame> requestStream, IServerStreamWriter<Frame> responseStream, ServerCallContext context)
        {
            await foreach (var frame in requestStream.ReadAllAsync(context.CancellationToken).ConfigureAwait(false))
                await responseStream.WriteAsync(frame).ConfigureAwait(false);
        }
    }

    private sealed class Connection(GrpcChannel channel, AsyncDuplexStreamingCall<Frame, Frame> call, int size) : IPingPongConnection
    {
        private readonly Frame _frame = PingPongFrames.Data(PingPongFrames.Payload(size));

        public async Task RoundTripsAsync(long[] ticks)
        {
            for (int i = 0; i < ticks.Length; i++)
            {
                long start = Stopwatch.GetTimestamp();
                await call.RequestStream.WriteAsync(_frame).ConfigureAwait(false);
                if (!await call.ResponseStream.MoveNext(CancellationToken.None).ConfigureAwait(false))
                    throw new InvalidOperationException("The echo ended the call.");
                ticks[i] = Stopwatch.GetTimestamp() - start;
                int echoed = call.ResponseStream.Current.Data.Payload.Length;
                if (echoed != size) throw new InvalidOperationException($"Echo of {echoed} bytes, not {size}.");
            }
        }

        public async ValueTask DisposeAsync()
        {
            try
            {
                await call.RequestStream.CompleteAsync().ConfigureAwait(false);
                while (await call.ResponseStream.MoveNext(CancellationToken.None).ConfigureAwait(false))
                {
                }
            }
            finally
            {
                call.Dispose();
                channel.Dispose();
            }
        }
    }
}

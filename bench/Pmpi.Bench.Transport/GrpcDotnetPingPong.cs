using System.Diagnostics;
using System.Net;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Server.Kestrel.Core;
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

    private GrpcDotnetPingPong(WebApplication server, Uri address)
    {
        _server = server;
        _address = address;
    }

    public string Name => "gRPC for .NET";

    public static async Task<GrpcDotnetPingPong> StartAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.Listen(IPAddress.Loopback, 0, listen => listen.Protocols = HttpProtocols.Http2);
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
        return new GrpcDotnetPingPong(app, new Uri(address));
    }

    public async Task<IPingPongConnection> ConnectAsync(int size)
    {
        var handler = new SocketsHttpHandler
        {
            EnableMultipleHttp2Connections = true,
            UseProxy = false,
            InitialHttp2StreamWindowSize = RpcServerLimits.Default.StreamWindowSize,
        };
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

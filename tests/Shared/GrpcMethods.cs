using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests.Shared;

/// <summary>
/// gRPC methods no generated client or service base has, for Grpc.Net.Client callers and gRPC for .NET test servers:
/// the rank transport's Connect (transport.proto gets no generated service: ranks serve it with PMPI's own HTTP/2),
/// and any path at all, such as one no server serves or a request type its server does not expect.
/// </summary>
internal static class GrpcMethods
{
    /// <summary>RankTransport.Connect, frames both ways.</summary>
    public static readonly Method<Frame, Frame> Connect = Create<Frame, Frame>(MethodType.DuplexStreaming, ServicePaths.Connect);

    /// <summary>The method at <paramref name="path"/> ("/package.Service/Method") with protobuf messages.</summary>
    public static Method<TRequest, TResponse> Create<TRequest, TResponse>(MethodType type, string path)
        where TRequest : class, IMessage<TRequest>, new() where TResponse : class, IMessage<TResponse>, new()
    {
        int slash = path.LastIndexOf('/');
        return new Method<TRequest, TResponse>(type, path[1..slash], path[(slash + 1)..], Marshaller<TRequest>(), Marshaller<TResponse>());
    }

    /// <summary>Starts a call of <paramref name="method"/> on <paramref name="channel"/> that ends after <paramref name="deadline"/> at the latest.</summary>
    public static AsyncDuplexStreamingCall<TRequest, TResponse> StartCall<TRequest, TResponse>(this ChannelBase channel, Method<TRequest, TResponse> method, TimeSpan deadline)
        where TRequest : class where TResponse : class =>
        channel.CreateCallInvoker().AsyncDuplexStreamingCall(method, null, new CallOptions(deadline: DateTime.UtcNow + deadline));

    /// <summary>Reads the responses to their end, each within <paramref name="timeout"/>; a failed call throws its status.</summary>
    public static async Task ReadToEndAsync<T>(this IAsyncStreamReader<T> responses, TimeSpan timeout)
    {
        while (await responses.MoveNext(CancellationToken.None).WaitAsync(timeout))
        {
        }
    }

    private static Marshaller<T> Marshaller<T>() where T : class, IMessage<T>, new()
    {
        var parser = new MessageParser<T>(() => new T());
        return Marshallers.Create(message => message.ToByteArray(), parser.ParseFrom);
    }
}

/// <summary>
/// RankTransport served by gRPC for .NET (a Kestrel test server standing in for a rank), bound the way Grpc.Tools
/// binds a generated service base.
/// </summary>
[BindServiceMethod(typeof(RankTransportBase), nameof(BindService))]
internal abstract class RankTransportBase
{
    public abstract Task Connect(IAsyncStreamReader<Frame> requests, IServerStreamWriter<Frame> responses, ServerCallContext context);

    public static void BindService(ServiceBinderBase binder, RankTransportBase? service) =>
        binder.AddMethod(GrpcMethods.Connect, service is null ? null : new DuplexStreamingServerMethod<Frame, Frame>(service.Connect));
}

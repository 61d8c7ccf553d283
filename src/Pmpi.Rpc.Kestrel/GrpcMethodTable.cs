using System.Diagnostics.CodeAnalysis;
using Google.Protobuf;
using Grpc.AspNetCore.Server.Model;
using Grpc.Core;
using Pmpi.Rpc.Kestrel.Internal;
using ProtoService = Google.Protobuf.Reflection.ServiceDescriptor;

namespace Pmpi.Rpc.Kestrel;

/// <summary>
/// The gRPC methods of one service and the calls that serve them, bound in place of the generated <c>BindService</c>.
/// That one calls <see cref="ServiceBinderBase"/>'s <c>AddMethod</c>, a generic virtual method, for each method; under
/// Native AOT each such call builds its generic dictionary at run time, which made a daemon's start, and with it
/// every `pmpi run`, tens of milliseconds slower (docs/bench-log/2026-11-30-pmpi-run-start.md). The Add*Method calls
/// of <see cref="ServiceMethodProviderContext{TService}"/> used here are not virtual, so the compiler builds them ahead.
/// </summary>
/// <remarks>
/// Each entry is checked against the contract's descriptor when it is added (name, kind, request and response types),
/// and discovery refuses a table that leaves a method of the contract out, so a table cannot drift from proto/.
/// </remarks>
/// <typeparam name="TService">The service implementation gRPC for .NET activates for each call.</typeparam>
public sealed class GrpcMethodTable<[DynamicallyAccessedMembers(DaemonGrpcExtensions.ServiceMembers)] TService> : IServiceMethodProvider<TService> where TService : class
{
    private readonly ProtoService _service;
    private readonly List<Action<ServiceMethodProviderContext<TService>>> _methods = [];
    private readonly HashSet<string> _names = new(StringComparer.Ordinal);

    /// <summary>A table for the methods of <paramref name="service"/>, the generated <c>Descriptor</c> of its contract.</summary>
    public GrpcMethodTable(ProtoService service)
    {
        ArgumentNullException.ThrowIfNull(service);
        _service = service;
    }

    /// <summary>Serves the unary method <paramref name="name"/> with <paramref name="call"/>.</summary>
    public GrpcMethodTable<TService> Unary<TRequest, TResponse>(string name, UnaryServerMethod<TService, TRequest, TResponse> call)
        where TRequest : class, IMessage<TRequest>, new() where TResponse : class, IMessage<TResponse>, new()
    {
        var method = Describe<TRequest, TResponse>(name, MethodType.Unary);
        _methods.Add(context => context.AddUnaryMethod(method, [], call));
        return this;
    }

    /// <summary>Serves the server-streaming method <paramref name="name"/> with <paramref name="call"/>.</summary>
    public GrpcMethodTable<TService> ServerStreaming<TRequest, TResponse>(string name, ServerStreamingServerMethod<TService, TRequest, TResponse> call)
        where TRequest : class, IMessage<TRequest>, new() where TResponse : class, IMessage<TResponse>, new()
    {
        var method = Describe<TRequest, TResponse>(name, MethodType.ServerStreaming);
        _methods.Add(context => context.AddServerStreamingMethod(method, [], call));
        return this;
    }

    /// <summary>Serves the client-streaming method <paramref name="name"/> with <paramref name="call"/>.</summary>
    public GrpcMethodTable<TService> ClientStreaming<TRequest, TResponse>(string name, ClientStreamingServerMethod<TService, TRequest, TResponse> call)
        where TRequest : class, IMessage<TRequest>, new() where TResponse : class, IMessage<TResponse>, new()
    {
        var method = Describe<TRequest, TResponse>(name, MethodType.ClientStreaming);
        _methods.Add(context => context.AddClientStreamingMethod(method, [], call));
        return this;
    }

    /// <summary>Serves the bidirectional-streaming method <paramref name="name"/> with <paramref name="call"/>.</summary>
    public GrpcMethodTable<TService> DuplexStreaming<TRequest, TResponse>(string name, DuplexStreamingServerMethod<TService, TRequest, TResponse> call)
        where TRequest : class, IMessage<TRequest>, new() where TResponse : class, IMessage<TResponse>, new()
    {
        var method = Describe<TRequest, TResponse>(name, MethodType.DuplexStreaming);
        _methods.Add(context => context.AddDuplexStreamingMethod(method, [], call));
        return this;
    }

    /// <inheritdoc/>
    /// <exception cref="InvalidOperationException">The table leaves out a method of the contract.</exception>
    public void OnServiceMethodDiscovery(ServiceMethodProviderContext<TService> context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var missing = _service.Methods.Where(method => !_names.Contains(method.Name)).Select(method => method.Name).ToList();
        if (missing.Count > 0)
            throw new InvalidOperationException($"{typeof(TService).Name}'s method table leaves out {string.Join(", ", missing)} of {_service.FullName}.");
        foreach (var add in _methods) add(context);
    }

    private Method<TRequest, TResponse> Describe<TRequest, TResponse>(string name, MethodType type)
        where TRequest : class, IMessage<TRequest>, new() where TResponse : class, IMessage<TResponse>, new()
    {
        var method = _service.FindMethodByName(name) ?? throw new ArgumentException($"{_service.FullName} has no method {name}.", nameof(name));
        var contracted = (method.IsClientStreaming, method.IsServerStreaming) switch
        {
            (false, false) => MethodType.Unary,
            (false, true) => MethodType.ServerStreaming,
            (true, false) => MethodType.ClientStreaming,
            (true, true) => MethodType.DuplexStreaming,
        };
        if (contracted != type || method.InputType.ClrType != typeof(TRequest) || method.OutputType.ClrType != typeof(TResponse))
        {
            throw new ArgumentException($"{_service.FullName}.{name} is {contracted} from {method.InputType.ClrType?.Name} to {method.OutputType.ClrType?.Name}, "
                + $"not {type} from {typeof(TRequest).Name} to {typeof(TResponse).Name}.", nameof(name));
        }
        if (!_names.Add(name)) throw new ArgumentException($"{_service.FullName}.{name} is in the table twice.", nameof(name));
        return new Method<TRequest, TResponse>(type, _service.FullName, name, ProtobufMarshaller<TRequest>.Instance, ProtobufMarshaller<TResponse>.Instance);
    }
}

using Google.Protobuf;
using Grpc.Core;

namespace Pmpi.Rpc.Kestrel.Internal;

/// <summary>Protocol Buffers on the wire, as the generated marshallers read and write it: straight to and from gRPC's buffers.</summary>
internal static class ProtobufMarshaller<T> where T : class, IMessage<T>, new()
{
    private static readonly MessageParser<T> s_parser = new(() => new T());

    public static readonly Marshaller<T> Instance = Marshallers.Create<T>(
        (message, context) =>
        {
            context.SetPayloadLength(message.CalculateSize());
            message.WriteTo(context.GetBufferWriter());
            context.Complete();
        },
        context => s_parser.ParseFrom(context.PayloadAsReadOnlySequence()));
}

using System.Buffers.Binary;

namespace Pmpi.Rpc.Streams;

/// <summary>HTTP/2 frame types (RFC 9113 section 6).</summary>
internal enum Http2FrameType : byte
{
    Data = 0,
    Headers = 1,
    Priority = 2,
    RstStream = 3,
    Settings = 4,
    PushPromise = 5,
    Ping = 6,
    GoAway = 7,
    WindowUpdate = 8,
    Continuation = 9,
}

/// <summary>HTTP/2 error codes (RFC 9113 section 7).</summary>
internal enum Http2Error : uint
{
    NoError = 0,
    ProtocolError = 1,
    InternalError = 2,
    FlowControlError = 3,
    SettingsTimeout = 4,
    StreamClosed = 5,
    FrameSizeError = 6,
    RefusedStream = 7,
    Cancel = 8,
    CompressionError = 9,
    ConnectError = 0xa,
    EnhanceYourCalm = 0xb,
    InadequateSecurity = 0xc,
    Http11Required = 0xd,
}

/// <summary>A peer broke HTTP/2 in a way that ends the connection; <see cref="Code"/> goes into the GOAWAY.</summary>
internal sealed class Http2ProtocolException(Http2Error code, string message) : Exception(message)
{
    public Http2Error Code => code;
}

/// <summary>Frame flags, and the layout of the 9-byte frame header.</summary>
internal static class Http2Frame
{
    public const int HeaderSize = 9;
    public const byte EndStream = 0x1, Ack = 0x1, EndHeaders = 0x4, Padded = 0x8, Priority = 0x20;

    /// <summary>The client connection preface (RFC 9113 section 3.4).</summary>
    public static ReadOnlySpan<byte> Preface => "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"u8;

    /// <summary>The largest window (and window increment) HTTP/2 allows.</summary>
    public const int MaxWindow = int.MaxValue;

    /// <summary>The largest SETTINGS_MAX_FRAME_SIZE HTTP/2 allows, which PMPI announces: a megabyte chunk is one frame.</summary>
    public const int MaxFrameSize = (1 << 24) - 1;

    /// <summary>The frame size every peer must accept before it states another.</summary>
    public const int DefaultFrameSize = 16384;

    public const int DefaultWindow = 65535;

    public static void WriteHeader(Span<byte> destination, int length, Http2FrameType type, byte flags, int streamId)
    {
        destination[0] = (byte)(length >> 16);
        destination[1] = (byte)(length >> 8);
        destination[2] = (byte)length;
        destination[3] = (byte)type;
        destination[4] = flags;
        BinaryPrimitives.WriteInt32BigEndian(destination[5..], streamId & int.MaxValue);
    }

    public static (int Length, Http2FrameType Type, byte Flags, int StreamId) ReadHeader(ReadOnlySpan<byte> header) =>
        (header[0] << 16 | header[1] << 8 | header[2], (Http2FrameType)header[3], header[4], BinaryPrimitives.ReadInt32BigEndian(header[5..]) & int.MaxValue);
}

/// <summary>SETTINGS parameters (RFC 9113 section 6.5.2).</summary>
internal enum Http2Setting : ushort
{
    HeaderTableSize = 1,
    EnablePush = 2,
    MaxConcurrentStreams = 3,
    InitialWindowSize = 4,
    MaxFrameSize = 5,
    MaxHeaderListSize = 6,
}

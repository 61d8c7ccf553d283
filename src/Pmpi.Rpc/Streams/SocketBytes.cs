namespace Pmpi.Rpc.Streams;

/// <summary>What a thread about to read knows of the bytes in a connection's socket.</summary>
internal enum SocketBytes
{
    /// <summary>Nothing: it asks the kernel first.</summary>
    Unknown,

    /// <summary>Some are there (it saw them, and nobody read the socket since): it reads them without asking.</summary>
    Waiting,

    /// <summary>It leaves the socket to its next poll, which finds them as cheaply as asking now would.</summary>
    Unasked,
}

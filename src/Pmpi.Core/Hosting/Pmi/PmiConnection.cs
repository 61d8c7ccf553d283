using System.Globalization;
using System.Net.Sockets;
using System.Runtime.InteropServices;
using System.Text;

namespace Pmpi.Hosting.Pmi;

/// <summary>
/// The socket to the launcher's PMI server: the one it handed down (<c>PMI_FD</c>, an end of a socket pair Hydra's
/// proxy or slurmstepd made), or one dialed to the <c>host:port</c> it named (<c>PMI_PORT</c>, Hydra's
/// <c>-pmi-port</c>). Reads PMI-1 lines and PMI-2 frames from one buffer, since a server may send several lines at
/// once (Hydra's <c>initack</c> and its three <c>set</c> lines) and a PMI-2 conversation opens with a PMI-1 line.
/// Every command goes out in one write: Slurm reads a command with a single read.
/// </summary>
internal sealed partial class PmiConnection : IDisposable
{
    /// <summary>The longest PMI-1 line read; MPICH's own limit is 1,024 bytes (PMIU_MAXLINE).</summary>
    private const int MaxLine = 64 * 1024;

    private readonly Socket _socket;
    private byte[] _buffer = new byte[4096];
    private int _start, _end; // the bytes read but not yet consumed

    private PmiConnection(Socket socket, string source)
    {
        _socket = socket;
        Source = source;
    }

    /// <summary>How the connection was made, for messages: <c>PMI_FD=6</c> or <c>PMI_PORT=host:port</c>.</summary>
    public string Source { get; }

    /// <summary>Whether the server was dialed (<c>PMI_PORT</c>): it then learns who this process is from <c>PMI_ID</c>.</summary>
    public bool Dialed { get; private init; }

    /// <summary>Connects as <see cref="PmiEnvironment.Fd"/> or <see cref="PmiEnvironment.Port"/> say; null when neither is set.</summary>
    /// <exception cref="MpiException">Transport: the variable is malformed, or the server cannot be reached.</exception>
    public static PmiConnection? Open(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        if (read(PmiEnvironment.Fd) is { Length: > 0 } fdText)
        {
            if (!int.TryParse(fdText, NumberStyles.None, CultureInfo.InvariantCulture, out int fd))
                throw PmiEnvironment.Malformed(PmiEnvironment.Fd, fdText, "a file descriptor");
            Socket socket;
            try
            {
                socket = new Socket(new SafeSocketHandle(fd, ownsHandle: true));
            }
            catch (SocketException e)
            {
                throw new MpiException(ErrorClass.Transport, $"{PmiEnvironment.Fd}={fdText} is not a socket this process holds ({e.Message}); it is set by the launcher (Hydra's mpiexec, srun --mpi=pmi2) for the process it starts, not for that process's children.", e);
            }
            // Processes this rank starts must not inherit the launcher's socket: one that outlived the rank would keep
            // the launcher's end open.
            if (!OperatingSystem.IsWindows()) _ = FileControl(fd, SetFileDescriptorFlags, CloseOnExec);
            return new PmiConnection(socket, $"{PmiEnvironment.Fd}={fdText}");
        }
        if (read(PmiEnvironment.Port) is { Length: > 0 } port)
        {
            int colon = port.LastIndexOf(':');
            if (colon <= 0 || !int.TryParse(port.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int number) || number is 0 or > 65535)
                throw PmiEnvironment.Malformed(PmiEnvironment.Port, port, "host:port");
            var socket = new Socket(SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                socket.Connect(port[..colon].Trim('[', ']'), number);
            }
            catch (SocketException e)
            {
                socket.Dispose();
                throw new MpiException(ErrorClass.Transport, $"The PMI server at {PmiEnvironment.Port}={port} cannot be reached: {e.Message}", e);
            }
            return new PmiConnection(socket, $"{PmiEnvironment.Port}={port}") { Dialed = true };
        }
        return null;
    }

    /// <summary>Sends a PMI-1 line.</summary>
    public void Send(PmiCommand command) => Write(Encoding.UTF8.GetBytes(command.ToLine()));

    /// <summary>Sends a PMI-2 command.</summary>
    public void SendFrame(PmiCommand command) => Write(command.ToFrame());

    /// <summary>Reads a PMI-1 line.</summary>
    /// <exception cref="MpiException">Transport: the server closed the connection or sent something else.</exception>
    public PmiCommand ReceiveLine()
    {
        int newline;
        while ((newline = Array.IndexOf(_buffer, (byte)'\n', _start, _end - _start)) < 0)
        {
            if (_end - _start >= MaxLine) throw new MpiException(ErrorClass.Transport, $"The PMI server ({Source}) sent a line longer than {MaxLine} bytes.");
            Fill();
        }
        var line = Encoding.UTF8.GetString(_buffer, _start, newline - _start);
        _start = newline + 1;
        return PmiCommand.ParseLine(line);
    }

    /// <summary>Reads a PMI-2 command.</summary>
    /// <exception cref="MpiException">Transport: the server closed the connection or sent something else.</exception>
    public PmiCommand ReceiveFrame()
    {
        while (_end - _start < 6) Fill();
        int length = PmiCommand.ParseLength(_buffer.AsSpan(_start, 6));
        while (_end - _start < 6 + length) Fill();
        var body = Encoding.UTF8.GetString(_buffer, _start + 6, length);
        _start += 6 + length;
        return PmiCommand.ParseBody(body);
    }

    public void Dispose() => _socket.Dispose();

    private void Write(byte[] bytes)
    {
        try
        {
            _socket.Send(bytes);
        }
        catch (SocketException e)
        {
            throw new MpiException(ErrorClass.Transport, $"Cannot write to the PMI server ({Source}): {e.Message}", e);
        }
    }

    private void Fill()
    {
        if (_start > 0)
        {
            Buffer.BlockCopy(_buffer, _start, _buffer, 0, _end - _start);
            _end -= _start;
            _start = 0;
        }
        if (_end == _buffer.Length) Array.Resize(ref _buffer, Math.Min(_buffer.Length * 2, 6 + PmiCommand.MaxLength));
        int read;
        try
        {
            read = _socket.Receive(_buffer, _end, _buffer.Length - _end, SocketFlags.None);
        }
        catch (SocketException e)
        {
            throw new MpiException(ErrorClass.Transport, $"Cannot read from the PMI server ({Source}): {e.Message}", e);
        }
        if (read == 0) throw new MpiException(ErrorClass.Transport, $"The PMI server ({Source}) closed the connection: the launcher ended or refused this process.");
        _end += read;
    }

    private const int SetFileDescriptorFlags = 2; // F_SETFD
    private const int CloseOnExec = 1;            // FD_CLOEXEC

    [LibraryImport("libc", EntryPoint = "fcntl")]
    private static partial int FileControl(int descriptor, int command, int flags);
}

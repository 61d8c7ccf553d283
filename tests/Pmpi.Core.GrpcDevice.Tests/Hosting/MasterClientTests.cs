using System.Net;
using System.Net.Sockets;
using Pmpi.Hosting;

namespace Pmpi.Tests.Hosting;

/// <summary>A rank's line to its master, against an address where no master listens.</summary>
public sealed class MasterClientTests
{
    [Fact]
    public void Abort_AfterTheLineClosed_ReturnsForTheExitCodeToTell()
    {
        // A Finalize whose barrier fails closes the line before the rank reports why; the report must not crash the rank.
        var master = new MasterClient(new RankIdentity("job", 0, 2, $"http://127.0.0.1:{UnusedPort()}", "token", Domain: null, BindAddress: "127.0.0.1"));
        var reason = new MpiException(ErrorClass.Aborted, "Rank 0 failed: on purpose") { AbortCode = 3 };
        master.Abort(reason); // nobody listens: refused, and said nothing of
        master.Dispose();

        var error = Record.Exception(() => master.Abort(reason));

        Assert.Null(error);
    }

    private static int UnusedPort()
    {
        using var socket = new Socket(SocketType.Stream, ProtocolType.Tcp);
        socket.Bind(new IPEndPoint(IPAddress.Loopback, 0));
        return ((IPEndPoint)socket.LocalEndPoint!).Port;
    }
}

using System.Net;
using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Http;

namespace Pmpi.Rpc.Kestrel.Internal;

/// <summary>
/// A connection a listener admitted (<see cref="ConnectionAdmission"/>), as a feature of the connection and so of
/// each of its calls: whether its caller has proven itself yet, which is what decides whom the listener sheds first.
/// </summary>
internal sealed class AdmittedConnection
{
    private readonly ConnectionAdmission _admission;
    private volatile bool _authenticated;

    internal AdmittedConnection(ConnectionAdmission admission, ConnectionContext connection, IPAddress address, bool authenticated)
    {
        _admission = admission;
        Connection = connection;
        Address = address;
        _authenticated = authenticated;
        InListener = new(this);
        InAddress = new(this);
    }

    public ConnectionContext Connection { get; }

    /// <summary>The remote IP address, IPv4-mapped addresses as IPv4.</summary>
    public IPAddress Address { get; }

    /// <summary>"address:port", for the log.</summary>
    public string Peer => Connection.RemoteEndPoint?.ToString() ?? Address.ToString();

    /// <summary>Whether the caller proved itself: a client certificate of the cluster, or a call that passed its check.</summary>
    public bool IsAuthenticated => _authenticated;

    /// <summary>Set by the admission under its lock once the connection no longer counts (closed, shed or expired).</summary>
    internal bool Released { get; set; }

    /// <summary>Whether the admission itself closed the connection (shed for another, or unauthenticated too long): nothing else to log.</summary>
    internal bool ClosedByAdmission { get; set; }

    /// <summary>Whether the TLS handshake completed (TLS listeners).</summary>
    internal bool Handshaken { get; set; }

    /// <summary>Why the TLS handshake refused the caller, when the listener's own check did (a certificate of another CA).</summary>
    internal string? TlsRefusal { get; set; }

    /// <summary>This connection's places in the admission's lists of unauthenticated connections, oldest first.</summary>
    internal LinkedListNode<AdmittedConnection> InListener { get; }

    internal LinkedListNode<AdmittedConnection> InAddress { get; }

    /// <summary>
    /// Marks the connection of <paramref name="context"/> as authenticated, once a call on it proved its caller (a
    /// request signature, a job key, a route proof): from then on it is never shed for another connection nor
    /// closed for want of authentication. Nothing happens on a server that does not admit connections this way.
    /// </summary>
    public static void MarkAuthenticated(HttpContext context) => context.Features.Get<AdmittedConnection>()?.Authenticate();

    /// <summary>Marks the connection as authenticated (see <see cref="MarkAuthenticated"/>).</summary>
    public void Authenticate()
    {
        if (_authenticated) return;
        _admission.Authenticated(this);
    }

    internal void SetAuthenticated() => _authenticated = true;
}

using System.Net;
using Google.Protobuf;
using Pmpi.Hosting;
using Pmpi.Matching;
using Pmpi.Payloads;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Server;
using Pmpi.Rpc.V1;

namespace Pmpi.Devices.Grpc;

/// <summary>
/// The device of ranks that are processes: each rank serves RankTransport on its own Kestrel endpoint, registers it
/// with the job's master, receives the rank table once every rank has registered, and on the first send to a peer
/// chooses the one stream its messages to that peer will travel on (<see cref="PeerStreams"/>).
/// </summary>
internal sealed class GrpcDevice : IDevice
{
    private static readonly TimeSpan RegistrationTimeout = TimeSpan.FromMinutes(2);

    private readonly RankIdentity _identity;
    private readonly RpcServer _server;
    private readonly PeerStreams _peers;

    private GrpcDevice(RankIdentity identity, RpcServer server, MatchingEngine engine, PeerStreams peers)
    {
        _identity = identity;
        _server = server;
        Engine = engine;
        _peers = peers;
    }

    public int Rank => _identity.Rank;

    public int Size => _identity.Size;

    public MatchingEngine Engine { get; }

    public string ProcessorName => System.Environment.MachineName;

    /// <summary>Where this rank's RankTransport endpoint listens (what it registered with the master).</summary>
    public Uri Endpoint => _server.Address;

    /// <summary>How many Connect calls this rank's endpoint has accepted: the streams its peers opened to it.</summary>
    internal int StreamsAccepted => _peers.Inbound.Accepted;

    /// <summary>Opens this rank's endpoint, registers with the master and waits for the rank table.</summary>
    public static async Task<GrpcDevice> StartAsync(RankIdentity identity, CancellationToken cancellationToken)
    {
        var engine = new MatchingEngine();
        // Before the endpoint opens: a peer that got the table first may open a stream to this rank at once.
        var peers = new PeerStreams(identity, engine);
        // Beyond loopback the endpoint speaks TLS with a certificate made now; peers pin it from the rank table.
        byte[] pin = [];
        var security = identity.EncryptStreams ? RpcSecurity.SelfSigned(out pin) : RpcSecurity.Insecure;
        var server = await RpcServer.StartAsync(IPAddress.Parse(identity.BindAddress), 0,
            endpoints => endpoints.MapGrpcDuplexStreaming<Frame, Frame>(ServicePaths.Connect, peers.Inbound.ServeAsync), security: security, cancellationToken: cancellationToken).ConfigureAwait(false);
        try
        {
            using var master = new RpcChannel(identity.Master, security: identity.MasterSecurity);
            var table = await master.UnaryAsync<RegisterRequest, RankTable>(ServicePaths.Register, new RegisterRequest
            {
                JobId = identity.JobId,
                JobToken = identity.JobToken,
                Rank = identity.Rank,
                Endpoint = server.Address.ToString(),
                Domain = identity.Domain ?? "",
                CertificateSha256 = ByteString.CopyFrom(pin),
            }, RegistrationTimeout, cancellationToken).ConfigureAwait(false);
            if (table.Ranks.Count != identity.Size)
                throw new MpiException(ErrorClass.Transport, $"The master returned a table of {table.Ranks.Count} ranks for a job of {identity.Size}.");
            peers.UseEndpoints([.. table.Ranks.Select(entry => new Uri(entry.Endpoint))],
                [.. table.Ranks.Select(entry => entry.CertificateSha256.IsEmpty ? RpcSecurity.Insecure : RpcSecurity.PinnedCertificate(entry.CertificateSha256.Span))]);
            return new GrpcDevice(identity, server, engine, peers);
        }
        catch (RpcException e)
        {
            await server.DisposeAsync().ConfigureAwait(false);
            throw new MpiException(ErrorClass.Transport, $"Rank {identity.Rank} could not register with the master at {identity.Master}: {e.Message}", e);
        }
    }

    public SendOperation Send(int destination, Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        if (destination == Rank) return SendToSelf(envelope, payload, synchronous);
        try
        {
            return _peers.LinkTo(destination).Send(envelope, payload, synchronous);
        }
        catch (RpcException e)
        {
            throw new MpiException(ErrorClass.Transport, $"Rank {Rank} cannot reach rank {destination} at {_peers.EndpointOf(destination)}: {e.Message}", e);
        }
    }

    public void Abort(MpiException reason)
    {
        try
        {
            using var master = new RpcChannel(_identity.Master, security: _identity.MasterSecurity);
            master.UnaryAsync<AbortRequest, AbortReply>(ServicePaths.Abort, new AbortRequest
            {
                JobId = _identity.JobId,
                JobToken = _identity.JobToken,
                Rank = Rank,
                ErrorCode = reason.AbortCode ?? 1,
                Reason = reason.Message,
            }, TimeSpan.FromSeconds(5)).GetAwaiter().GetResult();
        }
        catch (RpcException)
        {
            // The master is gone or slow; the rank's exit code still tells its agent.
        }
        Engine.Abort(reason);
    }

    public void Dispose()
    {
        _peers.DisposeAsync().AsTask().GetAwaiter().GetResult();
        _server.DisposeAsync().AsTask().GetAwaiter().GetResult();
    }

    private SendOperation SendToSelf(Envelope envelope, OutgoingPayload payload, bool synchronous)
    {
        var operation = synchronous ? new SendOperation() : SendOperation.Done;
        Engine.Deliver(BufferedMessage.Of(envelope, payload, synchronous ? operation : null));
        return operation;
    }
}

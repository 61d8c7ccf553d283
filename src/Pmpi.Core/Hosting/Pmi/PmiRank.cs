using System.Globalization;
using System.Net;
using System.Net.NetworkInformation;
using System.Net.Sockets;
using System.Security.Cryptography;
using Pmpi.Devices.Grpc;
using Pmpi.Rpc.Routing;
using Pmpi.Rpc;
using Pmpi.Rpc.V1;

namespace Pmpi.Hosting.Pmi;

/// <summary>
/// A rank process that a PMI launcher started (Hydra's <c>mpiexec</c>, <c>srun --mpi=pmi2</c>), joined to its job
/// through the launcher's key-value space instead of a master. How it joins:
/// (1) every rank puts its node's name, and rank 0 the job's key (32 random bytes) and how ranks of one node link;
/// fence; every rank gets them all. The space is read through the launcher's PMI server, so the key is as private as
/// the launcher keeps it (docs/security.md, "Ranks started by a PMI launcher").
/// (2) a job all on one node stops here: shared memory links its ranks, named under the key, and no rank listens.
/// (3) otherwise every rank opens its endpoint (TLS with a certificate made now when it listens beyond loopback),
/// puts its address and certificate's SHA-256; fence; every rank gets those of the peers it reaches by network.
/// (4) the rank table built from them routes a link to every rank, as a master's table would.
/// Its job control is the launcher's: an abort asks it to end the job. It spawns nothing: PMPI does not ask the
/// launcher for processes.
/// </summary>
internal sealed class PmiRank : IJobControl, IDisposable
{
    private const string JobKey = "pmpi-job";
    private const string NetworkLinks = "network";
    private const string SharedMemoryLinks = "shared-memory";
    private static readonly TimeSpan AbortGrace = TimeSpan.FromMilliseconds(200);
    private static readonly System.Buffers.SearchValues<char> HexDigits = System.Buffers.SearchValues.Create("0123456789ABCDEFabcdef");

    private readonly PmiClient _pmi;

    private PmiRank(PmiClient pmi, GrpcDevice device, NodePlace place)
    {
        _pmi = pmi;
        Device = device;
        Place = place;
    }

    /// <summary>The rank's endpoint (if any) and its links to every peer.</summary>
    public GrpcDevice Device { get; }

    /// <summary>The rank's place in the job.</summary>
    public int Rank => _pmi.Rank;

    /// <summary>Where the rank sits on its node, from the nodes every rank put in step (1).</summary>
    public NodePlace Place { get; }

    /// <summary>
    /// Joins the job of the launcher that <paramref name="pmi"/> talks to, in the steps above; takes ownership of
    /// <paramref name="pmi"/>. A rank that fails says why, then asks the launcher to end the job.
    /// </summary>
    /// <exception cref="MpiException">The launcher failed, a variable is malformed, or a peer cannot be reached.</exception>
    public static PmiRank Start(PmiClient pmi, Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(pmi);
        ArgumentNullException.ThrowIfNull(read);
        int rank = pmi.Rank, size = pmi.Size;
        try
        {
            // (1)
            string node = System.Environment.MachineName;
            pmi.Put(NodeKey(rank), node);
            if (rank == 0) pmi.Put(JobKey, $"{Convert.ToHexString(RandomNumberGenerator.GetBytes(32))}|{Links(read)}");
            pmi.Fence();
            var job = pmi.Get(JobKey).Split('|');
            if (job.Length != 2 || job[0].Length != 64 || job[1] is not (NetworkLinks or SharedMemoryLinks))
                throw new MpiException(ErrorClass.Transport, $"Rank {rank} read '{JobKey}' from the launcher's key-value space, and it is not what rank 0 of a PMPI job puts there.");
            bool network = job[1] == NetworkLinks;
            var nodes = new string[size];
            bool oneNode = true;
            for (int peer = 0; peer < size; peer++)
            {
                nodes[peer] = peer == rank ? node : pmi.Get(NodeKey(peer));
                oneNode &= nodes[peer] == node;
            }

            // (2)
            var bind = oneNode ? IPAddress.Loopback : BindAddress(read, rank);
            var identity = new RankIdentity(pmi.JobId, rank, size, Master: "", JobToken: job[0], Domain: null, bind.ToString())
            {
                EncryptStreams = !IPAddress.IsLoopback(bind),
                NodeLocal = oneNode && !network,
            };
            var device = GrpcDevice.Open(identity);
            try
            {
                var table = new RankTable { NetworkLinks = network, Unbound = true }; // the launcher binds ranks, or not, as it was told
                for (int peer = 0; peer < size; peer++) table.Ranks.Add(new RankEntry { Rank = peer, Node = nodes[peer] });

                // (3)
                if (!identity.NodeLocal)
                {
                    pmi.Put(EndpointKey(rank), $"{device.Endpoint}|{Convert.ToHexString(device.CertificatePin)}");
                    pmi.Fence();
                    for (int peer = 0; peer < size; peer++)
                    {
                        if (peer != rank && (network || nodes[peer] != node)) Fill(table.Ranks[peer], pmi.Get(EndpointKey(peer)), rank);
                    }
                }

                // (4)
                device.Connect(table, Enumerable.Range(0, size));
                return new PmiRank(pmi, device, NodePlace.Among(nodes, rank));
            }
            catch
            {
                device.Dispose();
                throw;
            }
        }
        catch (MpiException e)
        {
            // Said here, since the launcher ends the job on the abort, before the exception would be reported; the
            // abort spares the peers waiting in a fence for this rank (srun would leave them there).
            var message = $"Rank {rank} failed to join its job: {e.Message}";
            Console.Error.WriteLine(message);
            AbortJob(pmi, 1, message);
            pmi.Dispose();
            throw;
        }
    }

    /// <summary>Asks the launcher to end the job with the reason's code.</summary>
    public void Abort(MpiException reason)
    {
        ArgumentNullException.ThrowIfNull(reason);
        AbortJob(_pmi, reason.AbortCode ?? 1, reason.Message);
    }

    /// <summary>Closes the rank's links and endpoint, then tells the launcher this rank is done (PMI_Finalize).</summary>
    public void Dispose()
    {
        Device.Dispose();
        try
        {
            _pmi.Finish();
        }
        finally
        {
            _pmi.Dispose();
        }
    }

    private static void AbortJob(PmiClient pmi, int exitCode, string message)
    {
        // Hydra ends the job as soon as it reads an abort, and its proxy polls this rank's output and PMI socket
        // together: without a pause, what the rank printed just before (why it failed) is often never shown.
        Thread.Sleep(AbortGrace);
        pmi.Abort(exitCode, message);
    }

    private static string NodeKey(int rank) => string.Create(CultureInfo.InvariantCulture, $"pmpi-node-{rank}");

    private static string EndpointKey(int rank) => string.Create(CultureInfo.InvariantCulture, $"pmpi-endpoint-{rank}");

    private static string Links(Func<string, string?> read) => read(PmiEnvironment.Links) switch
    {
        null or "" or SharedMemoryLinks => SharedMemoryLinks,
        NetworkLinks => NetworkLinks,
        var other => throw PmiEnvironment.Malformed(PmiEnvironment.Links, other, $"{SharedMemoryLinks} or {NetworkLinks}"),
    };

    /// <summary>Sets <paramref name="entry"/>'s endpoint and certificate from what its rank put: <c>address|SHA-256 in hex</c>.</summary>
    private static void Fill(RankEntry entry, string value, int rank)
    {
        int bar = value.LastIndexOf('|');
        int pinLength = value.Length - bar - 1;
        if (bar < 0 || !Uri.TryCreate(value[..bar], UriKind.Absolute, out _) || pinLength is not (0 or 2 * SHA256.HashSizeInBytes)
            || value.AsSpan(bar + 1).ContainsAnyExcept(HexDigits))
            throw new MpiException(ErrorClass.Transport, $"Rank {rank} read rank {entry.Rank}'s endpoint '{value}' from the launcher's key-value space, and it is not an address and a certificate's SHA-256.");
        entry.Endpoint = value[..bar];
        entry.CertificateSha256 = Google.Protobuf.ByteString.CopyFrom(Convert.FromHexString(value.AsSpan(bar + 1)));
    }

    /// <summary>
    /// The address this rank listens on for peers on other nodes: <see cref="RankEnvironment.BindAddress"/> when set
    /// (through the launcher, e.g. <c>mpiexec -genv</c>), else the first address beyond loopback that the node's name
    /// resolves to, else that of the first interface that is up.
    /// </summary>
    private static IPAddress BindAddress(Func<string, string?> read, int rank)
    {
        if (read(RankEnvironment.BindAddress) is { Length: > 0 } given)
            return IPAddress.TryParse(given, out var address) ? address : throw PmiEnvironment.Malformed(RankEnvironment.BindAddress, given, "an IP address");
        try
        {
            foreach (var address in Dns.GetHostAddresses(Dns.GetHostName()))
            {
                if (address.AddressFamily == AddressFamily.InterNetwork && !IPAddress.IsLoopback(address)) return address;
            }
        }
        catch (SocketException)
        {
            // The node's name does not resolve: its interfaces still say.
        }
        foreach (var face in NetworkInterface.GetAllNetworkInterfaces())
        {
            if (face.OperationalStatus != OperationalStatus.Up || face.NetworkInterfaceType == NetworkInterfaceType.Loopback) continue;
            foreach (var unicast in face.GetIPProperties().UnicastAddresses)
            {
                if (unicast.Address.AddressFamily == AddressFamily.InterNetwork) return unicast.Address;
            }
        }
        throw new MpiException(ErrorClass.Transport, $"Rank {rank} has peers on other nodes but its node ({System.Environment.MachineName}) has no address beyond loopback; set {RankEnvironment.BindAddress} through the launcher.");
    }
}

using Pmpi.Devices.Grpc;
using Pmpi.Routing;

namespace Pmpi.Hosting;

/// <summary>A rank process an agent launched, joined to its job: its gRPC device and its master.</summary>
internal sealed class LaunchedRank : IDisposable
{
    private LaunchedRank(GrpcDevice device, MasterClient master)
    {
        Device = device;
        Master = master;
    }

    /// <summary>The rank's endpoint and its links to every peer.</summary>
    public GrpcDevice Device { get; }

    /// <summary>The rank's job control.</summary>
    public MasterClient Master { get; }

    /// <summary>
    /// Opens the rank's endpoint, registers it with the master, and routes a link to every peer from the rank table
    /// the master answers with. A peer that cannot be reached is reported to the master as this rank's failure.
    /// </summary>
    /// <exception cref="MpiException">Registration failed, or a peer cannot be reached; nothing was sent.</exception>
    public static async Task<LaunchedRank> StartAsync(RankIdentity identity, CancellationToken cancellationToken)
    {
        var device = await GrpcDevice.OpenAsync(identity, cancellationToken).ConfigureAwait(false);
        var master = new MasterClient(identity);
        try
        {
            var table = await master.RegisterAsync(device.Endpoint, device.CertificatePin, cancellationToken).ConfigureAwait(false);
            try
            {
                device.Connect(JobRoutes.FromTable(table));
            }
            catch (MpiException e)
            {
                master.Abort(new MpiException(ErrorClass.Aborted, $"Rank {identity.Rank} failed: {e.Message}", e) { AbortCode = 1 });
                throw;
            }
            return new LaunchedRank(device, master);
        }
        catch
        {
            master.Dispose();
            device.Dispose();
            throw;
        }
    }

    /// <summary>Closes the rank's streams and endpoint, then its line to the master.</summary>
    public void Dispose()
    {
        Device.Dispose();
        Master.Dispose();
    }
}

using System.Net.Http;
using System.Security.Cryptography;
using Grpc.Core;
using Pmpi.Devices.Grpc;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests.Transport;

/// <summary>
/// Rank endpoints as they are beyond loopback: TLS with a certificate each rank makes at start and its peers pin
/// from the rank table. MPI traffic flows over it, and a peer expecting another certificate gets nowhere.
/// </summary>
public sealed class EncryptedStreamTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task Job_EncryptedStreams_PointToPointAndCollectivesArriveOverTls()
    {
        // Arrange
        using var job = new LoopbackGrpcJob(3, encryptStreams: true);
        var sums = new long[3];
        var received = new double[3][];

        // Act
        await Task.Run(() => Environment.Run(job, world =>
        {
            sums[world.Rank] = world.Allreduce((long)world.Rank + 1, Operation<long>.Add);
            var payload = Enumerable.Range(0, 100_000).Select(i => (double)i).ToArray();
            if (world.Rank == 0) world.Send(payload, dest: 2, tag: 7);
            if (world.Rank == 2) received[2] = world.Receive<double[]>(source: 0, tag: 7);
        })).WaitAsync(Timeout);

        // Assert
        Assert.All(Enumerable.Range(0, 3), rank => Assert.Equal("https", job.Started(rank)!.Endpoint!.Scheme));
        Assert.Equal([6L, 6L, 6L], sums);
        Assert.Equal(99_999.0, received[2][^1]);
    }

    [Fact]
    public async Task Connect_PinOfAnotherCertificate_Refused()
    {
        // Arrange: a caller pinning some other certificate, as a peer fooled into dialing the wrong endpoint would.
        using var job = new LoopbackGrpcJob(2, encryptStreams: true);
        var devices = await Task.WhenAll(Task.Run(() => (GrpcDevice)job.Start(0).Device), Task.Run(() => (GrpcDevice)job.Start(1).Device)).WaitAsync(Timeout);
        var caller = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out _);

        // Act: dialed as a rank dials its peers.
        var error = await Assert.ThrowsAsync<RpcException>(() =>
            GrpcStream.DialAsync(devices[1].Endpoint!, ServicePaths.Connect, caller.DialingPinned(SHA256.HashData("another certificate"u8)))).WaitAsync(Timeout);

        // Assert
        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
        Assert.Equal(0, devices[1].StreamsAccepted);
    }

    [Fact]
    public async Task Connect_CertificateNotInTheRankTable_RefusedBeforeTheHello()
    {
        // Arrange: a caller holding the job key but not a certificate the table pins (nor the cluster's).
        using var job = new LoopbackGrpcJob(2, encryptStreams: true);
        var devices = await Task.WhenAll(Task.Run(() => (GrpcDevice)job.Start(0).Device), Task.Run(() => (GrpcDevice)job.Start(1).Device)).WaitAsync(Timeout);
        var stranger = RpcSecurity.RankEndpoint(Task.FromResult<Func<string, bool>>(_ => false), out _);
        using var channel = RpcChannels.For(devices[1].Endpoint!, stranger.DialingPinned(devices[1].CertificatePin));

        // Act: the refusal races the hello, so the write may already fail; the call's outcome is what is asserted.
        using var call = channel.StartCall(GrpcMethods.Connect, TimeSpan.FromSeconds(10));
        try
        {
            await call.RequestStream.WriteAsync(new Frame { Hello = new Hello { JobId = job.JobId, JobToken = job.JobToken, SourceWorldRank = 0, DestinationWorldRank = 1 } }).WaitAsync(Timeout);
        }
        catch (Exception e) when (e is RpcException or IOException) { } // HttpIOException, or the TLS write's broken pipe
        var error = await Assert.ThrowsAsync<RpcException>(() => call.ResponseStream.MoveNext(CancellationToken.None)).WaitAsync(Timeout);

        // Assert
        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
        Assert.Equal(0, devices[1].StreamsAccepted);
    }
}

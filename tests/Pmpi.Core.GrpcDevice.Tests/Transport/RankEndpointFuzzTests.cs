using Google.Protobuf;
using Grpc.Core;
using Pmpi.Devices.Grpc;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests.Transport;

/// <summary>
/// Randomized mutation of what a peer of the same job sends a rank endpoint behind a valid Hello (the job's own
/// token): mutated Data, Chunk and Ack frames, frames with no body, and mutated gRPC framing reach the frame codec and the
/// matching engine. A broken message may rightly abort the rank's MPI operations; it must never crash the process or
/// hang a call, and the endpoint must keep answering. The integration fuzz covers what a stranger sends, before Hello.
/// </summary>
public sealed class RankEndpointFuzzTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Connect_MutatedFramesBehindAValidHello_NeverCrashesAndTheEndpointServes()
    {
        // Arrange
        using var job = new LoopbackGrpcJob(2);
        var devices = await Task.WhenAll(Task.Run(() => (GrpcDevice)job.Start(0).Device), Task.Run(() => (GrpcDevice)job.Start(1).Device)).WaitAsync(Timeout);
        var receiver = devices[1];
        var hello = new Frame { Hello = new Hello { JobId = job.JobId, JobToken = job.JobToken, SourceWorldRank = 0, DestinationWorldRank = 1 } };
        var data = new Data { Context = 0, Source = 0, Tag = 3, Sequence = 1, TypeCode = (int)Payloads.PayloadCode.Int32, IsArray = true, TotalLength = 8, Payload = ByteString.CopyFrom(new byte[8]) };
        FuzzSeed[] seeds =
        [
            new(ServicePaths.Connect, new Frame { Data = data }),
            new(ServicePaths.Connect, new Frame { Data = new Data(data) { TotalLength = 2 * 1024 * 1024, Payload = ByteString.CopyFrom(new byte[64]) } }),
            new(ServicePaths.Connect, new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(1, 2, 3, 4) } }),
            new(ServicePaths.Connect, new Frame { Ack = new Ack { Sequence = 1 } }),
            new(ServicePaths.Connect, new Frame()),
        ];

        // Act
        int answered = 0;
        foreach (int seed in FuzzSettings.Seeds)
            answered += await EndpointFuzzer.RunAsync(receiver.Endpoint!, seed, FuzzSettings.Iterations, seeds, opening: hello).WaitAsync(TimeSpan.FromMinutes(10));

        // Assert: the endpoint still answers a call, with the status a stranger gets.
        Assert.True(answered > 0, "No mutated call was answered: the fuzzer did not reach the endpoint.");
        using var channel = RpcChannels.For(receiver.Endpoint!);
        using var call = channel.StartCall(GrpcMethods.Connect, Timeout);
        await call.RequestStream.WriteAsync(new Frame { Hello = new Hello { JobId = "stranger", JobToken = "guess" } }).WaitAsync(Timeout);
        await call.RequestStream.CompleteAsync().WaitAsync(Timeout);
        var error = await Assert.ThrowsAsync<RpcException>(() => call.ResponseStream.ReadToEndAsync(Timeout));
        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
    }
}

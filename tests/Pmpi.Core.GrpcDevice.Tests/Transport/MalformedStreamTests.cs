using Google.Protobuf;
using Google.Protobuf.WellKnownTypes;
using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Devices.Grpc;
using Pmpi.Rpc;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests.Transport;

/// <summary>
/// What a rank's RankTransport endpoint does with a misbehaving peer: the call fails with a status that says what was
/// wrong, a broken message aborts that rank's MPI operations with an error naming both ranks, and the process serves on.
/// </summary>
public sealed class MalformedStreamTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private LoopbackGrpcJob _job = null!;
    private GrpcDevice _receiver = null!;
    private GrpcChannel _channel = null!;

    public async Task InitializeAsync()
    {
        _job = new LoopbackGrpcJob(2);
        // Registration answers once both ranks registered, so both start at once.
        var devices = await Task.WhenAll(Task.Run(() => (GrpcDevice)_job.Start(0).Device), Task.Run(() => (GrpcDevice)_job.Start(1).Device)).WaitAsync(Timeout);
        _receiver = devices[1];
        _channel = RpcChannels.For(_receiver.Endpoint!);
    }

    public Task DisposeAsync()
    {
        _channel.Dispose();
        _job.Dispose();
        return Task.CompletedTask;
    }

    [Fact]
    public async Task Connect_FirstFrameNotHello_FailsInvalidArgumentAndRankStaysHealthy()
    {
        var error = await CallAsync(new Frame { Data = new Data { Tag = 1 } });

        Assert.Equal(StatusCode.InvalidArgument, error.StatusCode);
        Assert.Contains("must open with a Hello", error.Status.Detail);
        Assert.Null(_receiver.Engine.AbortReason);
    }

    [Fact]
    public async Task Connect_OversizedFirstFrame_FailsResourceExhaustedBeforeItIsBuffered()
    {
        // A "Hello" of 1 MB: refused from its length prefix, so the endpoint never holds it.
        var error = await CallAsync(new Frame { Hello = new Hello { JobId = new string('j', 1 << 20), JobToken = _job.JobToken } });

        Assert.Equal(StatusCode.ResourceExhausted, error.StatusCode);
        Assert.Contains("first message may be at most 4096 bytes", error.Status.Detail);
        Assert.Equal(0, _receiver.StreamsAccepted);
        Assert.Null(_receiver.Engine.AbortReason);
    }

    [Fact]
    public async Task Connect_NoHelloWithin10Seconds_FailsDeadlineExceeded()
    {
        // A caller that opens a stream and sends nothing holds it only until the Hello's deadline.
        using var call = _channel.StartCall(GrpcMethods.Connect, Timeout);

        var error = await Assert.ThrowsAsync<RpcException>(() => call.ResponseStream.ReadToEndAsync(Timeout));

        Assert.Equal(StatusCode.DeadlineExceeded, error.StatusCode);
        Assert.Contains("must send its first message within 10 s", error.Status.Detail);
        Assert.Null(_receiver.Engine.AbortReason);
    }

    [Fact]
    public async Task Connect_WrongJobToken_FailsPermissionDenied()
    {
        var error = await CallAsync(new Frame { Hello = new Hello { JobId = "another-job", JobToken = "guess", SourceWorldRank = 0 } });

        Assert.Equal(StatusCode.PermissionDenied, error.StatusCode);
        Assert.Null(_receiver.Engine.AbortReason);
    }

    [Fact]
    public async Task Connect_HelloForAnotherRank_FailsNotFoundAndRankStaysHealthy()
    {
        var misrouted = new Frame { Hello = new Hello { JobId = _job.JobId, JobToken = _job.JobToken, SourceWorldRank = 0, DestinationWorldRank = 0 } };

        var error = await CallAsync(misrouted);

        Assert.Equal(StatusCode.NotFound, error.StatusCode);
        Assert.Contains("Rank 1 of job", error.Status.Detail);
        Assert.Contains("refuses a stream from rank 0 for rank 0", error.Status.Detail);
        Assert.Null(_receiver.Engine.AbortReason);
    }

    // Each twice: a small frame, read whole, and a large one, whose payload the endpoint reads straight to its place.
    [Theory]
    [InlineData(3)]
    [InlineData(8192)]
    public async Task Connect_ChunkWithoutData_AbortsReceiverNamingBothRanks(int payloadSize)
    {
        var error = await CallAsync(Hello(), new Frame { Chunk = new Chunk { Payload = ByteString.CopyFrom(new byte[payloadSize]) } });

        Assert.Equal(StatusCode.InvalidArgument, error.StatusCode);
        Assert.Contains("Unexpected Chunk frame from rank 0", error.Status.Detail);
        AssertReceiverAborted("from rank 0 to rank 1");
    }

    [Theory]
    [InlineData(10)]
    [InlineData(8192)]
    public async Task Connect_PeerDisconnectsMidMessage_AbortsReceiverNamingBothRanks(int payloadSize)
    {
        var truncated = new Data { Context = 0, Source = 0, Tag = 5, Sequence = 1, TypeCode = (int)Payloads.PayloadCode.Byte, IsArray = true, TotalLength = 100_000, Payload = ByteString.CopyFrom(new byte[payloadSize]) };

        var error = await CallAsync(Hello(), new Frame { Data = truncated });

        Assert.Equal(StatusCode.Aborted, error.StatusCode);
        Assert.Contains("Rank 0 disconnected in the middle of a message of 100000 bytes to rank 1", error.Status.Detail);
        AssertReceiverAborted("from rank 0 to rank 1");
    }

    [Theory]
    [InlineData(8)]
    [InlineData(8192)]
    public async Task Connect_MoreBytesThanAnnounced_FailsNamingTheTag(int payloadSize)
    {
        var data = new Data { Tag = 9, Sequence = 1, TypeCode = (int)Payloads.PayloadCode.Byte, IsArray = true, TotalLength = 4, Payload = ByteString.CopyFrom(new byte[payloadSize]) };

        var error = await CallAsync(Hello(), new Frame { Data = data });

        Assert.Equal(StatusCode.InvalidArgument, error.StatusCode);
        Assert.Contains("more than the 4 bytes it announced (tag 9)", error.Status.Detail);
        AssertReceiverAborted("from rank 0 to rank 1");
    }

    [Fact]
    public async Task Connect_BytesThatAreNotAFrame_FailsAndRankStaysHealthy()
    {
        // Field 1 (Frame.hello) holding bytes with an invalid wire type: not a Frame.
        using var call = _channel.StartCall(GrpcMethods.Create<BytesValue, Frame>(MethodType.DuplexStreaming, ServicePaths.Connect), Timeout);
        await call.RequestStream.WriteAsync(new BytesValue { Value = ByteString.CopyFrom(0x0F, 0xFF, 0xFF) }).WaitAsync(Timeout);
        await call.RequestStream.CompleteAsync().WaitAsync(Timeout);

        var error = await Assert.ThrowsAsync<RpcException>(() => call.ResponseStream.ReadToEndAsync(Timeout));

        Assert.NotEqual(StatusCode.OK, error.StatusCode);
        Assert.Null(_receiver.Engine.AbortReason);
    }

    [Fact]
    public async Task UnknownMethod_FailsUnimplemented()
    {
        using var call = _channel.StartCall(GrpcMethods.Create<Frame, Frame>(MethodType.DuplexStreaming, "/pmpi.v1.RankTransport/NoSuchMethod"), Timeout);
        await call.RequestStream.CompleteAsync().WaitAsync(Timeout);

        var error = await Assert.ThrowsAsync<RpcException>(() => call.ResponseStream.ReadToEndAsync(Timeout));

        Assert.Equal(StatusCode.Unimplemented, error.StatusCode);
    }

    private Frame Hello() => new() { Hello = new Hello { JobId = _job.JobId, JobToken = _job.JobToken, SourceWorldRank = 0, DestinationWorldRank = 1 } };

    /// <summary>Sends <paramref name="frames"/> on a Connect call, ends the request stream, and returns how the call failed (while writing or after).</summary>
    private async Task<RpcException> CallAsync(params Frame[] frames)
    {
        using var call = _channel.StartCall(GrpcMethods.Connect, Timeout);
        try
        {
            foreach (var frame in frames) await call.RequestStream.WriteAsync(frame).WaitAsync(Timeout);
            await call.RequestStream.CompleteAsync().WaitAsync(Timeout);
        }
        catch (Exception e) when (e is RpcException or IOException)
        {
            // The refusal may already meet a write (the endpoint resets the stream as soon as it has seen enough), which
            // then fails CANCELLED: the endpoint's status is the response's.
        }
        return await Assert.ThrowsAsync<RpcException>(() => call.ResponseStream.ReadToEndAsync(Timeout));
    }

    private void AssertReceiverAborted(string ranks)
    {
        var reason = _receiver.Engine.AbortReason;
        Assert.NotNull(reason);
        Assert.Equal(ErrorClass.Transport, reason.ErrorClass);
        Assert.Contains(ranks, reason.Message);
    }
}

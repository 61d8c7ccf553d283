using System.Buffers;
using Grpc.Core;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Interop;

/// <summary>
/// PMPI's gRPC layer against the reference implementation: a Python grpcio client calls our Kestrel server (gRPC for
/// .NET, as the daemons serve) and a rank stream listener, and our clients (<see cref="RpcChannels"/>' channels,
/// GrpcStream) call a Python grpcio server. Needs Debian's python3-grpcio, python3-protobuf and protobuf-compiler;
/// when they are missing the tests fail (they never skip), saying what to install.
/// </summary>
[Trait("Category", "Interop")]
public sealed class GrpcioInteropTests : IAsyncLifetime
{
    private static readonly TimeSpan Timeout = TestServer.Timeout;
    private static readonly TimeSpan ScriptTimeout = TimeSpan.FromSeconds(90);
    private readonly string _generated = Path.Combine(Path.GetTempPath(), $"pmpi-grpcio-{Guid.NewGuid():N}");

    private static string Scripts => Path.Combine(AppContext.BaseDirectory, "Interop");

    public Task InitializeAsync()
    {
        Directory.CreateDirectory(_generated);
        return GrpcioPython.CompileContractAsync(_generated, ["pmpi/v1/agent.proto", "pmpi/v1/master.proto", "pmpi/v1/staging.proto", "pmpi/v1/transport.proto"], ScriptTimeout);
    }

    public Task DisposeAsync()
    {
        try
        {
            Directory.Delete(_generated, recursive: true);
        }
        catch (IOException)
        {
            // A temp directory left behind harms nothing.
        }
        return Task.CompletedTask;
    }

    [Fact]
    public async Task GrpcioClient_CallsKestrelServer_UnaryDuplexStreamingAndStatusesInteroperate()
    {
        await using var server = await TestServer.StartAsync().WaitAsync(Timeout);
        await using var client = ChildProcess.Start(GrpcioPython.Python, [Path.Combine(Scripts, "grpcio_client.py"), _generated, $"127.0.0.1:{server.Address.Port}"], GrpcioPython.Environment, Scripts);

        int code = await client.WaitForExitAsync(ScriptTimeout).WaitAsync(ScriptTimeout + Timeout);

        Assert.True(code == 0 && client.Transcript.Contains("CLIENT OK", StringComparison.Ordinal),
            $"The grpcio client exited with {code}.\n{client.Transcript}");
    }

    [Fact]
    public async Task GrpcioClient_CallsRankStreamListener_ConnectEchoesAndOtherMethodsAreUnimplemented()
    {
        using var listener = GrpcStreamListener.Start(System.Net.IPAddress.Loopback, 0, ServicePaths.Connect, StreamEcho.Admit, RpcSecurity.Insecure);
        await using var client = ChildProcess.Start(GrpcioPython.Python, [Path.Combine(Scripts, "grpcio_client.py"), _generated, $"127.0.0.1:{listener.Address.Port}", "connect"], GrpcioPython.Environment, Scripts);

        int code = await client.WaitForExitAsync(ScriptTimeout).WaitAsync(ScriptTimeout + Timeout);

        Assert.True(code == 0 && client.Transcript.Contains("CLIENT OK", StringComparison.Ordinal),
            $"The grpcio client exited with {code}.\n{client.Transcript}");
    }

    [Fact]
    public async Task GrpcStream_CallsGrpcioServer_ConnectEchoesFramesAndA4MBChunkThenEndsOk()
    {
        await WithGrpcioServerAsync(async port =>
        {
            using var call = await GrpcStream.DialAsync(new Uri($"http://127.0.0.1:{port}"), ServicePaths.Connect, RpcSecurity.Insecure).WaitAsync(Timeout);
            var echoes = System.Threading.Channels.Channel.CreateUnbounded<byte[]>();
            var ended = new TaskCompletionSource<RpcException?>(TaskCreationOptions.RunContinuationsAsynchronously);
            var hello = new Frame { Hello = new Hello { JobId = "job", JobToken = "secret", SourceWorldRank = 0 } };
            call.Write(hello);
            call.Start(new StreamEcho.Receiver(message => echoes.Writer.TryWrite(message), error => ended.TrySetResult(error)));

            Assert.Equal(hello, Frame.Parser.ParseFrom(await echoes.Reader.ReadAsync().AsTask().WaitAsync(Timeout)));
            for (int i = 1; i <= 200; i++)
            {
                var frame = new Frame { Data = new Data { Context = 2, Source = 0, Tag = i, Sequence = (ulong)i, TotalLength = 4, Payload = Google.Protobuf.ByteString.CopyFrom(BitConverter.GetBytes(i)) } };
                call.Write(frame);
                Assert.Equal(frame, Frame.Parser.ParseFrom(await echoes.Reader.ReadAsync().AsTask().WaitAsync(Timeout)));
            }
            var big = new byte[4 << 20];
            Random.Shared.NextBytes(big);
            call.Write(new Frame { Chunk = new Chunk { Payload = Google.Protobuf.UnsafeByteOperations.UnsafeWrap(big) } });
            Assert.True(Frame.Parser.ParseFrom(await echoes.Reader.ReadAsync().AsTask().WaitAsync(Timeout)).Chunk.Payload.Span.SequenceEqual(big), "The 4 MB chunk came back changed.");
            call.Complete();

            Assert.Null(await ended.Task.WaitAsync(Timeout));
        });
    }

    [Fact]
    public async Task RpcChannels_CallsGrpcioServer_UnaryServerStreamingAndStatusesInteroperate()
    {
        await WithGrpcioServerAsync(async port =>
        {
            using var channel = RpcChannels.For(new Uri($"http://127.0.0.1:{port}"));
            var agent = new Agent.AgentClient(channel);

            // Unary.
            var info = await agent.GetNodeInfoAsync(new NodeInfoRequest()).ResponseAsync.WaitAsync(Timeout);
            Assert.Equal(("python-node", 5, 1.5), (info.NodeName, info.LogicalCores, info.LoadAverage1));
            Assert.Equal(["j1"], info.RunningJobs);

            // Server streaming.
            var launch = new LaunchRequest { JobId = "job", WorldSize = 2 };
            launch.Ranks.Add(new RankLaunch { Rank = 0, Program = "a.dll" });
            launch.Ranks.Add(new RankLaunch { Rank = 1, Program = "b.dll" });
            using (var call = agent.Launch(launch))
            {
                var events = await call.ResponseStream.ReadAllAsync().ToListAsync().AsTask().WaitAsync(Timeout);
                Assert.Equal(6, events.Count);
                Assert.Equal((1, true, "b.dll"), (events[4].Output.Rank, events[4].Output.IsError, events[4].Output.Line));
                Assert.Equal((1, 1), (events[5].Exited.Rank, events[5].Exited.ExitCode));
            }

            // Statuses: an aborted call with a percent-encoded message, an unknown method, a deadline.
            var denied = await Assert.ThrowsAsync<RpcException>(() => agent.KillAsync(new KillRequest { JobId = "j9" }).ResponseAsync).WaitAsync(Timeout);
            Assert.Equal((StatusCode.PermissionDenied, "job 'j9': 100% wrong token, é"), (denied.StatusCode, denied.Status.Detail));
            var noSuchMethod = GrpcMethods.Create<KillRequest, KillReply>(MethodType.Unary, "/pmpi.v1.Agent/NoSuchMethod");
            var unknown = await Assert.ThrowsAsync<RpcException>(() => channel.CreateCallInvoker().AsyncUnaryCall(noSuchMethod, null, default, new KillRequest()).ResponseAsync).WaitAsync(Timeout);
            Assert.Equal(StatusCode.Unimplemented, unknown.StatusCode);
            var late = await Assert.ThrowsAsync<RpcException>(() => new JobControl.JobControlClient(channel)
                .RegisterAsync(new RegisterRequest(), deadline: DateTime.UtcNow.AddMilliseconds(300)).ResponseAsync).WaitAsync(Timeout);
            Assert.Equal(StatusCode.DeadlineExceeded, late.StatusCode);
        });
    }

    /// <summary>
    /// Runs <paramref name="test"/> against a grpcio server started for it (given its port): a failure carries the
    /// server's transcript; afterwards the server stops by itself, or DisposeAsync kills it by id.
    /// </summary>
    private async Task WithGrpcioServerAsync(Func<string, Task> test)
    {
        await using var server = ChildProcess.Start(GrpcioPython.Python, [Path.Combine(Scripts, "grpcio_server.py"), _generated], GrpcioPython.Environment, Scripts, keepInputOpen: true);
        try
        {
            var first = await server.WaitForLineAsync(line => line.StartsWith("PORT ", StringComparison.Ordinal), Timeout, "'PORT <n>'");
            await test(first[5..]);
        }
        catch (Exception e) when (e is not TimeoutException)
        {
            throw new Xunit.Sdk.XunitException($"{e.Message}\ngrpcio server process {server.Id}:\n{server.Transcript}\n{e}");
        }
        finally
        {
            server.CloseInput();
            try
            {
                await server.WaitForExitAsync(TimeSpan.FromSeconds(10)).WaitAsync(Timeout);
            }
            catch (TimeoutException)
            {
                // Killed on dispose.
            }
        }
    }

    /// <summary>A rank stream listener's echo: each message goes back from a task of its own, and the call ends OK after the caller's does.</summary>
    private static class StreamEcho
    {
        public static IGrpcStreamReceiver Admit(GrpcStream stream, ReadOnlySequence<byte> first)
        {
            var outgoing = System.Threading.Channels.Channel.CreateUnbounded<byte[]>();
            outgoing.Writer.TryWrite(first.ToArray());
            _ = Task.Run(async () =>
            {
                try
                {
                    await foreach (var message in outgoing.Reader.ReadAllAsync()) stream.Write(message, []);
                    stream.Complete();
                }
                catch (RpcException)
                {
                    // The caller went away.
                }
            });
            return new Receiver(message => outgoing.Writer.TryWrite(message), _ => outgoing.Writer.TryComplete());
        }

        public sealed class Receiver(Action<byte[]> onMessage, Action<RpcException?> onEnd) : IGrpcStreamReceiver
        {
            public void OnMessage(ReadOnlySequence<byte> message) => onMessage(message.ToArray());

            public void OnEnd(RpcException? error) => onEnd(error);
        }
    }
}

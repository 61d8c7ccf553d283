using System.Net;
using Grpc.AspNetCore.Server;
using Grpc.Core;
using Grpc.Net.Client;
using Microsoft.AspNetCore.Builder;
using Microsoft.Extensions.DependencyInjection;
using Pmpi.Rpc.Kestrel;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Kestrel;

/// <summary>
/// A daemon's services are bound from method tables checked against the contract: a table serves its calls, and one
/// that names a method wrongly or leaves one out is refused before the server serves anything.
/// </summary>
public sealed class GrpcMethodTableTests
{
    [Fact]
    public async Task Call_ServiceBoundByItsTable_AnsweredByTheImplementation()
    {
        // Arrange
        await using var server = await StartAsync(grpc => grpc.AddMethodTable<JobControlStub>(JobControl.Descriptor, FullTable));
        using var channel = GrpcChannel.ForAddress(server.Address);
        var client = new JobControl.JobControlClient(channel);

        // Act
        var table = await client.RegisterAsync(new RegisterRequest { JobId = "job-7", Rank = 3 }, deadline: Deadline()).ResponseAsync.WaitAsync(TestServer.Timeout);
        var linked = await client.LinkedAsync(new LinkedRequest(), deadline: Deadline()).ResponseAsync.WaitAsync(TestServer.Timeout);

        // Assert: the unary reply came from the stub, through the table's marshallers both ways.
        Assert.Equal("job-7/3", Assert.Single(table.Ranks).Endpoint);
        Assert.NotNull(linked);
    }

    [Fact]
    public async Task Start_TableLeavingOutMethods_FailsNamingThem()
    {
        // Act
        var error = await Assert.ThrowsAsync<InvalidOperationException>(() => StartAsync(grpc => grpc.AddMethodTable<JobControlStub>(JobControl.Descriptor,
            table => table.Unary<RegisterRequest, RankTable>("Register", (service, request, context) => service.Register(request, context)))));

        // Assert
        Assert.Equal("JobControlStub's method table leaves out Abort, Spawn, Linked of pmpi.v1.JobControl.", error.Message);
    }

    [Fact]
    public void Add_MethodOfAnotherKind_RefusedNamingTheContract()
    {
        // Arrange
        var table = new GrpcMethodTable<JobControlStub>(JobControl.Descriptor);

        // Act
        var error = Assert.Throws<ArgumentException>(() => table.ServerStreaming<RegisterRequest, RankTable>("Register", (service, request, responses, context) => Task.CompletedTask));

        // Assert
        Assert.StartsWith("pmpi.v1.JobControl.Register is Unary from RegisterRequest to RankTable, not ServerStreaming from RegisterRequest to RankTable.", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Add_MethodWithOtherMessages_RefusedNamingTheContract()
    {
        // Arrange
        var table = new GrpcMethodTable<JobControlStub>(JobControl.Descriptor);

        // Act
        var error = Assert.Throws<ArgumentException>(() => table.Unary<AbortRequest, RankTable>("Register", (service, request, context) => Task.FromResult(new RankTable())));

        // Assert
        Assert.StartsWith("pmpi.v1.JobControl.Register is Unary from RegisterRequest to RankTable, not Unary from AbortRequest to RankTable.", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Add_UnknownOrRepeatedMethod_Refused()
    {
        // Arrange
        var table = new GrpcMethodTable<JobControlStub>(JobControl.Descriptor);
        table.Unary<LinkedRequest, LinkedReply>("Linked", (service, request, context) => service.Linked(request, context));

        // Act
        var unknown = Assert.Throws<ArgumentException>(() => table.Unary<LinkedRequest, LinkedReply>("Unlinked", (service, request, context) => service.Linked(request, context)));
        var repeated = Assert.Throws<ArgumentException>(() => table.Unary<LinkedRequest, LinkedReply>("Linked", (service, request, context) => service.Linked(request, context)));

        // Assert
        Assert.StartsWith("pmpi.v1.JobControl has no method Unlinked.", unknown.Message, StringComparison.Ordinal);
        Assert.StartsWith("pmpi.v1.JobControl.Linked is in the table twice.", repeated.Message, StringComparison.Ordinal);
    }

    private static void FullTable(GrpcMethodTable<JobControlStub> table) => table
        .Unary<RegisterRequest, RankTable>("Register", (service, request, context) => service.Register(request, context))
        .Unary<AbortRequest, AbortReply>("Abort", (service, request, context) => service.Abort(request, context))
        .Unary<SpawnRequest, RankTable>("Spawn", (service, request, context) => service.Spawn(request, context))
        .Unary<LinkedRequest, LinkedReply>("Linked", (service, request, context) => service.Linked(request, context));

    private static Task<RpcServer> StartAsync(Action<IGrpcServerBuilder> addTables) =>
        RpcServer.StartAsync(IPAddress.Loopback, 0, endpoints => endpoints.MapGrpcService<JobControlStub>(),
            services => addTables(services.AddDaemonGrpc())).WaitAsync(TestServer.Timeout);

    private static DateTime Deadline() => DateTime.UtcNow.Add(TestServer.Timeout);

    private sealed class JobControlStub : JobControl.JobControlBase
    {
        public override Task<RankTable> Register(RegisterRequest request, ServerCallContext context) =>
            Task.FromResult(new RankTable { Ranks = { new RankEntry { Endpoint = $"{request.JobId}/{request.Rank}" } } });

        public override Task<LinkedReply> Linked(LinkedRequest request, ServerCallContext context) => Task.FromResult(new LinkedReply());
    }
}

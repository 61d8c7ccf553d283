// The shared semantic suite (PointToPoint, Collectives, Communicators) on the gRPC device over loopback.

namespace Pmpi.Tests.Collectives
{
    public sealed class GrpcAllgatherTests() : AllgatherTests(Device.Grpc);

    public sealed class GrpcAllreduceTests() : AllreduceTests(Device.Grpc);

    public sealed class GrpcAlltoallTests() : AlltoallTests(Device.Grpc);

    public sealed class GrpcBarrierTests() : BarrierTests(Device.Grpc);

    public sealed class GrpcBroadcastTests() : BroadcastTests(Device.Grpc);

    public sealed class GrpcCollectiveArgumentTests() : CollectiveArgumentTests(Device.Grpc);

    public sealed class GrpcCountFormsTests() : CountFormsTests(Device.Grpc);

    public sealed class GrpcGatherTests() : GatherTests(Device.Grpc);

    public sealed class GrpcNonCommutativeTests() : NonCommutativeTests(Device.Grpc);
    public sealed class GrpcBlockAllreduceTests() : BlockAllreduceTests(Device.Grpc);

    public sealed class GrpcOperationTests() : OperationTests(Device.Grpc);

    public sealed class GrpcOutputFormsTests() : OutputFormsTests(Device.Grpc);

    public sealed class GrpcReduceScatterTests() : ReduceScatterTests(Device.Grpc);

    public sealed class GrpcReduceTests() : ReduceTests(Device.Grpc);

    public sealed class GrpcResultOwnershipTests() : ResultOwnershipTests(Device.Grpc);

    public sealed class GrpcScanTests() : ScanTests(Device.Grpc);

    public sealed class GrpcScatterTests() : ScatterTests(Device.Grpc);
}

namespace Pmpi.Tests.Communicators
{
    public sealed class GrpcCartesianTests() : CartesianTests(Device.Grpc);

    public sealed class GrpcBaseCommunicatorTests() : BaseCommunicatorTests(Device.Grpc);

    public sealed class GrpcIntercommunicatorTests() : IntercommunicatorTests(Device.Grpc);

    public sealed class GrpcTopologyTests() : TopologyTests(Device.Grpc);

    public sealed class GrpcContextIsolationTests() : ContextIsolationTests(Device.Grpc);

    public sealed class GrpcCreateTests() : CreateTests(Device.Grpc);

    public sealed class GrpcDupAndCompareTests() : DupAndCompareTests(Device.Grpc);

    public sealed class GrpcGroupTests() : GroupTests(Device.Grpc);

    public sealed class GrpcSplitTests() : SplitTests(Device.Grpc);

    public sealed class GrpcSubCommunicatorCollectiveTests() : SubCommunicatorCollectiveTests(Device.Grpc);
}

namespace Pmpi.Tests.PointToPoint
{
    public sealed class GrpcErrorTests() : ErrorTests(Device.Grpc);

    public sealed class GrpcNonblockingTests() : NonblockingTests(Device.Grpc);

    public sealed class GrpcObjectTests() : ObjectTests(Device.Grpc);

    public sealed class GrpcSendReceiveTests() : SendReceiveTests(Device.Grpc);
}

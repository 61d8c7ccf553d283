// The shared semantic suite (PointToPoint, Collectives, Communicators) on the gRPC device over loopback, and again
// over shared memory (the same device, every rank on one node).

namespace Pmpi.Tests.Collectives
{
    public sealed class GrpcAllgatherTests() : AllgatherTests(Device.Grpc);

    public sealed class SharedMemoryAllgatherTests() : AllgatherTests(Device.SharedMemory);

    public sealed class GrpcAllreduceTests() : AllreduceTests(Device.Grpc);

    public sealed class SharedMemoryAllreduceTests() : AllreduceTests(Device.SharedMemory);

    public sealed class GrpcAlltoallTests() : AlltoallTests(Device.Grpc);

    public sealed class SharedMemoryAlltoallTests() : AlltoallTests(Device.SharedMemory);

    public sealed class GrpcBarrierTests() : BarrierTests(Device.Grpc);

    public sealed class SharedMemoryBarrierTests() : BarrierTests(Device.SharedMemory);

    public sealed class GrpcBroadcastTests() : BroadcastTests(Device.Grpc);

    public sealed class SharedMemoryBroadcastTests() : BroadcastTests(Device.SharedMemory);

    public sealed class GrpcCollectiveArgumentTests() : CollectiveArgumentTests(Device.Grpc);

    public sealed class SharedMemoryCollectiveArgumentTests() : CollectiveArgumentTests(Device.SharedMemory);

    public sealed class GrpcCollectiveMismatchTests() : CollectiveMismatchTests(Device.Grpc);

    public sealed class SharedMemoryCollectiveMismatchTests() : CollectiveMismatchTests(Device.SharedMemory);

    public sealed class GrpcCountFormsTests() : CountFormsTests(Device.Grpc);

    public sealed class SharedMemoryCountFormsTests() : CountFormsTests(Device.SharedMemory);

    public sealed class GrpcGatherTests() : GatherTests(Device.Grpc);

    public sealed class SharedMemoryGatherTests() : GatherTests(Device.SharedMemory);

    public sealed class GrpcNonblockingCollectiveTests() : NonblockingCollectiveTests(Device.Grpc);

    public sealed class SharedMemoryNonblockingCollectiveTests() : NonblockingCollectiveTests(Device.SharedMemory);

    public sealed class GrpcNonCommutativeTests() : NonCommutativeTests(Device.Grpc);

    public sealed class SharedMemoryNonCommutativeTests() : NonCommutativeTests(Device.SharedMemory);

    public sealed class GrpcBlockAllreduceTests() : BlockAllreduceTests(Device.Grpc);

    public sealed class SharedMemoryBlockAllreduceTests() : BlockAllreduceTests(Device.SharedMemory);

    public sealed class GrpcOperationTests() : OperationTests(Device.Grpc);

    public sealed class SharedMemoryOperationTests() : OperationTests(Device.SharedMemory);

    public sealed class GrpcOutputFormsTests() : OutputFormsTests(Device.Grpc);

    public sealed class SharedMemoryOutputFormsTests() : OutputFormsTests(Device.SharedMemory);

    public sealed class GrpcReduceScatterTests() : ReduceScatterTests(Device.Grpc);

    public sealed class SharedMemoryReduceScatterTests() : ReduceScatterTests(Device.SharedMemory);

    public sealed class GrpcReduceTests() : ReduceTests(Device.Grpc);

    public sealed class SharedMemoryReduceTests() : ReduceTests(Device.SharedMemory);

    public sealed class GrpcResultOwnershipTests() : ResultOwnershipTests(Device.Grpc);

    public sealed class SharedMemoryResultOwnershipTests() : ResultOwnershipTests(Device.SharedMemory);

    public sealed class GrpcScanTests() : ScanTests(Device.Grpc);

    public sealed class SharedMemoryScanTests() : ScanTests(Device.SharedMemory);

    public sealed class GrpcScatterTests() : ScatterTests(Device.Grpc);

    public sealed class SharedMemoryScatterTests() : ScatterTests(Device.SharedMemory);
}

namespace Pmpi.Tests.Communicators
{
    public sealed class GrpcNeighborhoodTests() : NeighborhoodTests(Device.Grpc);

    public sealed class SharedMemoryNeighborhoodTests() : NeighborhoodTests(Device.SharedMemory);

    public sealed class GrpcCartesianTests() : CartesianTests(Device.Grpc);

    public sealed class SharedMemoryCartesianTests() : CartesianTests(Device.SharedMemory);

    public sealed class GrpcBaseCommunicatorTests() : BaseCommunicatorTests(Device.Grpc);

    public sealed class SharedMemoryBaseCommunicatorTests() : BaseCommunicatorTests(Device.SharedMemory);

    public sealed class GrpcIntercommunicatorTests() : IntercommunicatorTests(Device.Grpc);

    public sealed class SharedMemoryIntercommunicatorTests() : IntercommunicatorTests(Device.SharedMemory);

    public sealed class GrpcTopologyTests() : TopologyTests(Device.Grpc);

    public sealed class SharedMemoryTopologyTests() : TopologyTests(Device.SharedMemory);

    public sealed class GrpcContextIsolationTests() : ContextIsolationTests(Device.Grpc);

    public sealed class SharedMemoryContextIsolationTests() : ContextIsolationTests(Device.SharedMemory);

    public sealed class GrpcCreateTests() : CreateTests(Device.Grpc);

    public sealed class SharedMemoryCreateTests() : CreateTests(Device.SharedMemory);

    public sealed class GrpcDupAndCompareTests() : DupAndCompareTests(Device.Grpc);

    public sealed class SharedMemoryDupAndCompareTests() : DupAndCompareTests(Device.SharedMemory);

    public sealed class GrpcGroupTests() : GroupTests(Device.Grpc);

    public sealed class SharedMemoryGroupTests() : GroupTests(Device.SharedMemory);

    public sealed class GrpcSplitTests() : SplitTests(Device.Grpc);

    public sealed class SharedMemorySplitTests() : SplitTests(Device.SharedMemory);

    public sealed class GrpcSubCommunicatorCollectiveTests() : SubCommunicatorCollectiveTests(Device.Grpc);

    public sealed class SharedMemorySubCommunicatorCollectiveTests() : SubCommunicatorCollectiveTests(Device.SharedMemory);
}

namespace Pmpi.Tests.PointToPoint
{
    public sealed class GrpcMeterTests() : MeterTests(Device.Grpc);

    public sealed class SharedMemoryMeterTests() : MeterTests(Device.SharedMemory);

    public sealed class GrpcPersistentRequestTests() : PersistentRequestTests(Device.Grpc);

    public sealed class SharedMemoryPersistentRequestTests() : PersistentRequestTests(Device.SharedMemory);

    public sealed class GrpcMatchedProbeTests() : MatchedProbeTests(Device.Grpc);

    public sealed class SharedMemoryMatchedProbeTests() : MatchedProbeTests(Device.SharedMemory);

    public sealed class GrpcErrorTests() : ErrorTests(Device.Grpc);

    public sealed class SharedMemoryErrorTests() : ErrorTests(Device.SharedMemory);

    public sealed class GrpcNonblockingTests() : NonblockingTests(Device.Grpc);

    public sealed class SharedMemoryNonblockingTests() : NonblockingTests(Device.SharedMemory);

    public sealed class GrpcObjectTests() : ObjectTests(Device.Grpc);

    public sealed class SharedMemoryObjectTests() : ObjectTests(Device.SharedMemory);

    public sealed class GrpcSendReceiveTests() : SendReceiveTests(Device.Grpc);

    public sealed class SharedMemorySendReceiveTests() : SendReceiveTests(Device.SharedMemory);
}

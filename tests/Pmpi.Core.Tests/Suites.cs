// The shared semantic suite (PointToPoint, Collectives, Communicators) on the in-process device.

namespace Pmpi.Tests.Collectives
{
    public sealed class InProcessAllgatherTests() : AllgatherTests(Device.InProcess);

    public sealed class InProcessAllreduceTests() : AllreduceTests(Device.InProcess);

    public sealed class InProcessAlltoallTests() : AlltoallTests(Device.InProcess);

    public sealed class InProcessBarrierTests() : BarrierTests(Device.InProcess);

    public sealed class InProcessBroadcastTests() : BroadcastTests(Device.InProcess);

    public sealed class InProcessCollectiveArgumentTests() : CollectiveArgumentTests(Device.InProcess);

    public sealed class InProcessCollectiveMismatchTests() : CollectiveMismatchTests(Device.InProcess);

    public sealed class InProcessCountFormsTests() : CountFormsTests(Device.InProcess);

    public sealed class InProcessGatherTests() : GatherTests(Device.InProcess);

    public sealed class InProcessNonblockingCollectiveTests() : NonblockingCollectiveTests(Device.InProcess);

    public sealed class InProcessNonCommutativeTests() : NonCommutativeTests(Device.InProcess);
    public sealed class InProcessBlockAllreduceTests() : BlockAllreduceTests(Device.InProcess);

    public sealed class InProcessOperationTests() : OperationTests(Device.InProcess);

    public sealed class InProcessOutputFormsTests() : OutputFormsTests(Device.InProcess);

    public sealed class InProcessReduceScatterTests() : ReduceScatterTests(Device.InProcess);

    public sealed class InProcessReduceTests() : ReduceTests(Device.InProcess);

    public sealed class InProcessResultOwnershipTests() : ResultOwnershipTests(Device.InProcess);

    public sealed class InProcessScanTests() : ScanTests(Device.InProcess);

    public sealed class InProcessScatterTests() : ScatterTests(Device.InProcess);
}

namespace Pmpi.Tests.Communicators
{
    public sealed class InProcessNeighborhoodTests() : NeighborhoodTests(Device.InProcess);

    public sealed class InProcessCartesianTests() : CartesianTests(Device.InProcess);

    public sealed class InProcessBaseCommunicatorTests() : BaseCommunicatorTests(Device.InProcess);

    public sealed class InProcessIntercommunicatorTests() : IntercommunicatorTests(Device.InProcess);

    public sealed class InProcessTopologyTests() : TopologyTests(Device.InProcess);

    public sealed class InProcessContextIsolationTests() : ContextIsolationTests(Device.InProcess);

    public sealed class InProcessCreateTests() : CreateTests(Device.InProcess);

    public sealed class InProcessDupAndCompareTests() : DupAndCompareTests(Device.InProcess);

    public sealed class InProcessGroupTests() : GroupTests(Device.InProcess);

    public sealed class InProcessSplitTests() : SplitTests(Device.InProcess);

    public sealed class InProcessSubCommunicatorCollectiveTests() : SubCommunicatorCollectiveTests(Device.InProcess);
}

namespace Pmpi.Tests.PointToPoint
{
    public sealed class InProcessMeterTests() : MeterTests(Device.InProcess);

    public sealed class InProcessPersistentRequestTests() : PersistentRequestTests(Device.InProcess);

    public sealed class InProcessMatchedProbeTests() : MatchedProbeTests(Device.InProcess);

    public sealed class InProcessErrorTests() : ErrorTests(Device.InProcess);

    public sealed class InProcessNonblockingTests() : NonblockingTests(Device.InProcess);

    public sealed class InProcessObjectTests() : ObjectTests(Device.InProcess);

    public sealed class InProcessSendReceiveTests() : SendReceiveTests(Device.InProcess);
}

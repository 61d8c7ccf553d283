namespace Pmpi.Tests;

/// <summary>The devices the semantic suite runs on; every suite class states its device in its name.</summary>
public enum Device
{
    /// <summary>Ranks as threads sharing memory (Devices/InProcess).</summary>
    InProcess,
    /// <summary>Ranks as threads each owning a real gRPC device on loopback (Devices/Grpc), each on a node of its own.</summary>
    Grpc,
    /// <summary>The same ranks, all on one node: their links are shared memory (Devices/SharedMemory).</summary>
    SharedMemory,
}

/// <summary>
/// The semantic suite's base: a test class is abstract and takes the device it runs on; each test assembly declares
/// one concrete class per device it runs (InProcessErrorTests, GrpcErrorTests, ...), so a result names its device.
/// </summary>
public abstract class DeviceSuite(Device device)
{
    /// <summary>The device every job of this class runs on.</summary>
    protected Device Device => device;

    /// <summary>Runs a job of <paramref name="ranks"/> on <see cref="Device"/> under <see cref="TestJob.Timeout"/>.</summary>
    protected void Run(int ranks, Action<Intracommunicator> body) => TestJob.Run(device, ranks, new EnvironmentOptions(), body);

    /// <summary>Runs a job with <paramref name="options"/> (their timeout, else <see cref="TestJob.Timeout"/>).</summary>
    protected void Run(int ranks, EnvironmentOptions options, Action<Intracommunicator> body) => TestJob.Run(device, ranks, options, body);

    /// <summary>Runs a job and returns what each rank's <paramref name="body"/> returned, by rank.</summary>
    protected T[] Run<T>(int ranks, Func<Intracommunicator, T> body)
    {
        var results = new T[ranks];
        Run(ranks, world => { results[world.Rank] = body(world); });
        return results;
    }
}

/// <summary>Runs jobs on a device, always under a timeout so a deadlock fails fast instead of hanging CI.</summary>
internal static class TestJob
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>The rank counts every collective is checked at: 1, 2, 3, 4, 7 and 8 (powers of two and not).</summary>
    public static TheoryData<int> Sizes => [1, 2, 3, 4, 7, 8];

    /// <summary>3 and 7 ranks: odd sizes, which take the non-power-of-two paths; for MPI.NET's added forms.</summary>
    public static TheoryData<int> OddSizes => [3, 7];

    /// <summary>Every (size, root) pair over <see cref="Sizes"/>.</summary>
    public static TheoryData<int, int> SizesAndRoots
    {
        get
        {
            var data = new TheoryData<int, int>();
            foreach (var size in new[] { 1, 2, 3, 4, 7, 8 })
                for (int root = 0; root < size; root++) data.Add(size, root);
            return data;
        }
    }

    public static void Run(Device device, int ranks, EnvironmentOptions options, Action<Intracommunicator> body)
    {
        using var job = TestDevice.CreateJob(device, ranks);
        Pmpi.Environment.Run(job, body, new EnvironmentOptions
        {
            Timeout = options.Timeout ?? Timeout,
            Serializer = options.Serializer,
            PreserveReferences = options.PreserveReferences,
            Collectives = options.Collectives,
        });
    }

    /// <summary>Runs an in-process job: for tests of one device's own behaviour, outside the shared suite.</summary>
    public static T[] RunInProcess<T>(int ranks, Func<Intracommunicator, T> body)
    {
        var results = new T[ranks];
        Run(Device.InProcess, ranks, new EnvironmentOptions(), world => { results[world.Rank] = body(world); });
        return results;
    }
}

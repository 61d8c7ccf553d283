namespace Pmpi.Tests;

/// <summary>Runs jobs on the assembly's <see cref="TestDevice"/>, always under a timeout so a deadlock fails fast instead of hanging CI.</summary>
internal static class TestJob
{
    public static readonly TimeSpan Timeout = TimeSpan.FromSeconds(60);

    /// <summary>The rank counts every collective is checked at: 1, 2, 3, 4, 7 and 8 (powers of two and not).</summary>
    public static TheoryData<int> Sizes => [1, 2, 3, 4, 7, 8];

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

    public static void Run(int ranks, Action<Intracommunicator> body) => Run(ranks, new EnvironmentOptions(), body);

    /// <summary>Runs a job with <paramref name="options"/>, under <see cref="Timeout"/> whatever they say.</summary>
    public static void Run(int ranks, EnvironmentOptions options, Action<Intracommunicator> body)
    {
        using var job = TestDevice.CreateJob(ranks);
        Pmpi.Environment.Run(job, body, new EnvironmentOptions { Timeout = Timeout, Serializer = options.Serializer, PreserveReferences = options.PreserveReferences });
    }

    /// <summary>Runs a job and returns what each rank's <paramref name="body"/> returned, by rank.</summary>
    public static T[] Run<T>(int ranks, Func<Intracommunicator, T> body)
    {
        var results = new T[ranks];
        Run(ranks, world => { results[world.Rank] = body(world); });
        return results;
    }
}

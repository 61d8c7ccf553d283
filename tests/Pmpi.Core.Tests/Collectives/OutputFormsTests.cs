namespace Pmpi.Tests.Collectives;

/// <summary>
/// MPI.NET's <c>ref T[] outValues</c> forms: the same results as the returning forms, written into the caller's array
/// when it has the result's length (the same array afterwards) and into a new one when it is null.
/// </summary>
public abstract class OutputFormsTests(Device device) : DeviceSuite(device)
{
    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Allgather_IntoCallersArray_FillsItInRankOrder(int size)
    {
        var results = Run(size, world =>
        {
            var buffer = new int[size];
            var kept = buffer;
            world.Allgather(world.Rank * 2, ref buffer);
            int[] allocated = null!;
            world.Allgather(world.Rank * 2, ref allocated);
            return (Same: ReferenceEquals(kept, buffer), buffer, allocated);
        });

        var expected = Enumerable.Range(0, size).Select(r => r * 2).ToArray();
        Assert.All(results, r =>
        {
            Assert.True(r.Same, "The caller's array of the right length was replaced instead of filled.");
            Assert.Equal(expected, r.buffer);
            Assert.Equal(expected, r.allocated);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void AllgatherFlattened_CountAndCountsForms_ConcatenateIntoOutput(int size)
    {
        var counts = Enumerable.Range(0, size).Select(r => r % 3).ToArray();
        var results = Run(size, world =>
        {
            int[] equal = null!, variable = new int[counts.Sum()];
            world.AllgatherFlattened(new[] { world.Rank, -world.Rank }, 2, ref equal);
            world.AllgatherFlattened(Enumerable.Repeat(world.Rank, counts[world.Rank]).ToArray(), counts, ref variable);
            return (equal, variable);
        });

        Assert.All(results, r =>
        {
            Assert.Equal(Enumerable.Range(0, size).SelectMany(x => new[] { x, -x }), r.equal);
            Assert.Equal(Enumerable.Range(0, size).SelectMany(x => Enumerable.Repeat(x, counts[x])), r.variable);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Allreduce_ArrayIntoOutput_CombinesElementwise(int size)
    {
        var results = Run(size, world =>
        {
            var output = new long[2];
            world.Allreduce(new long[] { world.Rank, 1 }, Operation<long>.Add, ref output);
            return output;
        });

        Assert.All(results, r => Assert.Equal([size * (size - 1) / 2, size], r));
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Allreduce_IntoCallersArray_CombinesInPlaceAndInRankOrder(int size)
    {
        var results = Run(size, world =>
        {
            // 160 KB, so that rank processes lend it, into the input array itself.
            var sums = Enumerable.Range(0, 20_000).Select(i => (long)world.Rank * i).ToArray();
            var keptSums = sums;
            world.Allreduce(sums, Operation<long>.Add, ref sums);
            // A non-commutative operation, into an array of its own.
            var words = new string[2];
            var keptWords = words;
            world.Allreduce([$"{world.Rank}", $"<{world.Rank}>"], (first, second) => first + second, ref words);
            return (SameSums: ReferenceEquals(keptSums, sums), Sums: sums, SameWords: ReferenceEquals(keptWords, words), Words: words);
        });

        long ranks = size * (size - 1L) / 2;
        var ordered = new[] { string.Concat(Enumerable.Range(0, size)), string.Concat(Enumerable.Range(0, size).Select(r => $"<{r}>")) };
        Assert.All(results, r =>
        {
            Assert.True(r.SameSums && r.SameWords, "The caller's array of the right length was replaced instead of filled.");
            Assert.Equal(Enumerable.Range(0, 20_000).Select(i => ranks * i), r.Sums);
            Assert.Equal(ordered, r.Words);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Alltoall_AndFlattenedForms_IntoOutput(int size)
    {
        var results = Run(size, world =>
        {
            int[] single = null!, blocks = null!, variable = null!;
            world.Alltoall(Enumerable.Range(0, size).Select(dest => world.Rank * 100 + dest).ToArray(), ref single);
            world.AlltoallFlattened(Enumerable.Range(0, 2 * size).Select(i => world.Rank * 100 + i / 2).ToArray(), 2, ref blocks);
            // Rank r sends r + 1 copies of its rank to every rank.
            var sendCounts = Enumerable.Repeat(world.Rank + 1, size).ToArray();
            var receiveCounts = Enumerable.Range(0, size).Select(source => source + 1).ToArray();
            world.AlltoallFlattened(Enumerable.Repeat(world.Rank, (world.Rank + 1) * size).ToArray(), sendCounts, receiveCounts, ref variable);
            return (world.Rank, single, blocks, variable);
        });

        Assert.All(results, r =>
        {
            Assert.Equal(Enumerable.Range(0, size).Select(source => source * 100 + r.Rank), r.single);
            Assert.Equal(Enumerable.Range(0, size).SelectMany(source => new[] { source * 100 + r.Rank, source * 100 + r.Rank }), r.blocks);
            Assert.Equal(Enumerable.Range(0, size).SelectMany(source => Enumerable.Repeat(source, source + 1)), r.variable);
        });
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Gather_AndFlattenedForms_FillRootsOutputAndLeaveOthers(int size)
    {
        int root = size - 1;
        var counts = Enumerable.Range(0, size).Select(r => r % 3).ToArray();
        var results = Run(size, world =>
        {
            int[] single = [-1], blocks = [-1], variable = [-1];
            world.Gather(world.Rank, root, ref single);
            world.GatherFlattened(new[] { world.Rank, world.Rank }, root, ref blocks);
            world.GatherFlattened(Enumerable.Repeat(world.Rank, counts[world.Rank]).ToArray(), counts, root, ref variable);
            return (single, blocks, variable);
        });

        for (int rank = 0; rank < size; rank++)
        {
            if (rank != root)
            {
                Assert.All(new[] { results[rank].single, results[rank].blocks, results[rank].variable }, untouched => Assert.Equal([-1], untouched));
                continue;
            }
            Assert.Equal(Enumerable.Range(0, size), results[rank].single);
            Assert.Equal(Enumerable.Range(0, size).SelectMany(r => new[] { r, r }), results[rank].blocks);
            Assert.Equal(Enumerable.Range(0, size).SelectMany(r => Enumerable.Repeat(r, counts[r])), results[rank].variable);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Reduce_AndReduceScatter_IntoOutput(int size)
    {
        var counts = Enumerable.Range(0, size).Select(r => r % 2 + 1).ToArray();
        var results = Run(size, world =>
        {
            int[] reduced = [-1];
            world.Reduce(new[] { world.Rank, 1 }, Operation<int>.Add, 1, ref reduced);
            int[] scattered = null!;
            world.ReduceScatter(Enumerable.Repeat(world.Rank + 1, counts.Sum()).ToArray(), Operation<int>.Add, counts, ref scattered);
            return (reduced, scattered);
        });

        int total = size * (size + 1) / 2;
        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal(rank == 1 ? [size * (size - 1) / 2, size] : [-1], results[rank].reduced);
            Assert.Equal(Enumerable.Repeat(total, counts[rank]), results[rank].scattered);
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Scan_AndExclusiveScan_IntoOutput(int size)
    {
        var results = Run(size, world =>
        {
            int[] inclusive = null!, exclusive = [-1];
            world.Scan(new[] { world.Rank + 1 }, Operation<int>.Add, ref inclusive);
            world.ExclusiveScan(new[] { world.Rank + 1 }, Operation<int>.Add, ref exclusive);
            return (inclusive, exclusive);
        });

        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal([(rank + 1) * (rank + 2) / 2], results[rank].inclusive);
            Assert.Equal([rank == 0 ? -1 : rank * (rank + 1) / 2], results[rank].exclusive); // rank 0's is left as it was
        }
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Scatter_RootAndNonRootForms_GiveEachRankItsElement(int size)
    {
        const int root = 1;
        var results = Run(size, world => world.Rank == root
            ? world.Scatter(Enumerable.Range(0, size).Select(r => $"to {r}").ToArray())
            : world.Scatter<string>(root));

        Assert.Equal(Enumerable.Range(0, size).Select(r => $"to {r}"), results);
    }

    [Fact]
    public void Scatter_NonRootFormCalledByRoot_ThrowsNamingTheRootForm()
    {
        var error = Assert.Throws<MpiException>(() => Run(1, world => world.Scatter<int>(0)));

        var cause = Assert.IsType<MpiException>(error.InnerException);
        Assert.Equal(ErrorClass.InvalidArgument, cause.ErrorClass);
        Assert.Contains("Scatter(values)", cause.Message);
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void ScatterFromFlattened_CountAndCountsForms_IntoOutput(int size)
    {
        var counts = Enumerable.Range(0, size).Select(r => r % 3).ToArray();
        var results = Run(size, world =>
        {
            int[]? data = world.Rank == 0 ? Enumerable.Range(0, 2 * size).ToArray() : null;
            int[]? variableData = world.Rank == 0 ? Enumerable.Range(0, size).SelectMany(r => Enumerable.Repeat(r, counts[r])).ToArray() : null;
            int[] blocks = new int[2], variable = null!;
            world.ScatterFromFlattened(data, 2, 0, ref blocks);
            world.ScatterFromFlattened(variableData, counts, 0, ref variable);
            return (blocks, variable);
        });

        for (int rank = 0; rank < size; rank++)
        {
            Assert.Equal([2 * rank, 2 * rank + 1], results[rank].blocks);
            Assert.Equal(Enumerable.Repeat(rank, counts[rank]), results[rank].variable);
        }
    }
}

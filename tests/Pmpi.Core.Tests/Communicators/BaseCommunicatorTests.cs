using Pmpi.Tests.Collectives;

namespace Pmpi.Tests.Communicators;

/// <summary>What MPI.NET offers on the base Communicator type: Barrier, Clone, Compare, attributes and its spellings.</summary>
public abstract class BaseCommunicatorTests(Device device) : DeviceSuite(device)
{
    private sealed class Settings : ICloneable
    {
        public int Value;

        public object Clone() => new Settings { Value = Value };
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void BarrierAndClone_ThroughBaseType_ActOnTheCommunicator(int size)
    {
        var results = Run(size, world =>
        {
            Communicator comm = world;
            comm.Barrier();
            using var clone = comm.Clone();
            clone.Barrier();
            return (Type: clone.GetType(), Compared: clone.Compare(comm), Self: comm.Compare(comm), Size: clone.Size);
        });

        Assert.All(results, r => Assert.Equal((typeof(Intracommunicator), Comparison.Congruent, Comparison.Identical, size), (r.Type, r.Compared, r.Self, r.Size)));
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void Clone_Attributes_FollowTheirDuplicationMode(int size)
    {
        var none = Pmpi.Attribute.Create<string>(AttributeDuplication.None);
        var shallow = Pmpi.Attribute.Create<Settings>(AttributeDuplication.Shallow);
        var deep = Pmpi.Attribute.Create<Settings>(AttributeDuplication.Deep);
        var number = Pmpi.Attribute.Create<int>(AttributeDuplication.Deep);
        var results = Run(size, world =>
        {
            using var original = world.Dup();
            var shared = new Settings { Value = 1 };
            original.Attributes[none] = "not copied";
            original.Attributes[shallow] = shared;
            original.Attributes[deep] = shared;
            original.Attributes[number] = world.Rank;
            using var copy = original.Clone();
            shared.Value = 2;
            original.Attributes.Remove(number);
            return (None: copy.Attributes[none], Shallow: ((Settings)copy.Attributes[shallow]!).Value, Deep: ((Settings)copy.Attributes[deep]!).Value,
                Number: copy.Attributes[number], Removed: original.Attributes[number], world.Rank);
        });

        Assert.All(results, r =>
        {
            Assert.Null(r.None);
            Assert.Equal(2, r.Shallow);   // the same object
            Assert.Equal(1, r.Deep);      // a clone taken at Clone
            Assert.Equal(r.Rank, r.Number);
            Assert.Null(r.Removed);
        });
    }

    /// <summary>
    /// MPI.NET's AttributesTest: a shallow attribute of a structure larger than a pointer shares its place with the
    /// duplicate, so a value set on either is the other's; a small one (an int) is copied; removal detaches one side.
    /// </summary>
    [Fact]
    public void Clone_ShallowStructure_SharesItsPlaceWhereASmallValueIsCopied()
    {
        var point = Pmpi.Attribute.Create<Vector2D>(AttributeDuplication.Shallow);
        var small = Pmpi.Attribute.Create<int>(AttributeDuplication.Shallow);
        var deepPoint = Pmpi.Attribute.Create<Vector2D>(AttributeDuplication.Deep);
        Run(1, world =>
        {
            using var parent = world.Dup();
            parent.Attributes[point] = new Vector2D(2.1, 2.2);
            parent.Attributes[small] = 25;
            parent.Attributes[deepPoint] = new Vector2D(3.1, 3.2);
            using var child = parent.Clone();

            parent.Attributes[point] = new Vector2D(4.1, 4.2);
            parent.Attributes[small] = 99;
            parent.Attributes[deepPoint] = new Vector2D(5.1, 5.2);
            Assert.Equal(new Vector2D(4.1, 4.2), child.Attributes[point]);
            Assert.Equal(25, child.Attributes[small]);
            Assert.Equal(new Vector2D(3.1, 3.2), child.Attributes[deepPoint]);

            child.Attributes[point] = new Vector2D(6.1, 6.2);
            Assert.Equal(new Vector2D(6.1, 6.2), parent.Attributes[point]);
            parent.Attributes.Remove(point);
            Assert.Null(parent.Attributes[point]);
            Assert.Equal(new Vector2D(6.1, 6.2), child.Attributes[point]);
        });
    }

    [Fact]
    public void Attributes_ValueOfOtherType_ThrowsNamingBoth()
    {
        var key = Pmpi.Attribute.Create<int>(AttributeDuplication.Shallow);
        Run(1, world =>
        {
            var error = Assert.Throws<ArgumentException>(() => world.Attributes[key] = "text");
            Assert.Contains("System.Int32 values; System.String is not one", error.Message);
        });
    }

    [Fact]
    public void Create_DeepOfNonCloneableClass_Throws()
    {
        var error = Assert.Throws<ArgumentException>(() => Pmpi.Attribute.Create<List<int>>(AttributeDuplication.Deep));

        Assert.Contains("ICloneable", error.Message);
    }

    [Theory]
    [MemberData(nameof(TestJob.OddSizes), MemberType = typeof(TestJob))]
    public void ImmediateReceive_WithAction_CallsItWithTheValueOnCompletion(int size)
    {
        var results = Run(size, world =>
        {
            int right = (world.Rank + 1) % size, left = (world.Rank - 1 + size) % size;
            string? seen = null;
            var request = world.ImmediateReceive<string>(left, 6, value => seen = value);
            world.Send($"from {world.Rank}", right, 6);
            request.Wait();
            return (seen, request.Value);
        });

        for (int rank = 0; rank < size; rank++)
        {
            string expected = $"from {(rank - 1 + size) % size}";
            Assert.Equal((expected, expected), results[rank]);
        }
    }

    [Fact]
    public void LowercaseNames_AreMpiNetsSpellings()
    {
        Run(2, world =>
        {
            Assert.Same(Communicator.World, Communicator.world);
            Assert.Same(Communicator.Self, Communicator.self);
            Assert.Same(Group.Empty, Group.empty);
            if (world.Rank == 0) world.Send(4, 1, 2);
            else Assert.Equal(4, world.Receive<int>(Communicator.anySource, Communicator.anyTag));
        });
    }
}

using Pmpi.Agent.Computation;
using static Pmpi.Agent.Tests.Computation.JobText;

namespace Pmpi.Agent.Tests.Computation;

public class PlacementTests
{
    private static string[] NodesOf(string xml) =>
        Placement.Assign(Parse(xml)).Select(a => a.Node!.Name).ToArray();

    [Fact]
    public void Assign_UnpinnedRanks_FillEachNodeBeforeTheNext()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="a:1" slots="2"/>
              <node name="b" agent="b:1" slots="2"/>
              <node name="c" agent="c:1" slots="1"/>
              <ranks program="p.dll" count="1"/>
              <ranks program="q.dll" count="3"/>
            </computation>
            """;

        // Act
        string[] nodes = NodesOf(xml);

        // Assert
        Assert.Equal(["a", "a", "b", "b"], nodes);
    }

    [Fact]
    public void Assign_PinnedGroupLater_ReservesItsSlotsFirst()
    {
        // Arrange: without the reservation, rank 0 and 3 would take b's slots.
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="a:1" slots="2"/>
              <node name="b" agent="b:1" slots="2"/>
              <node name="c" agent="c:1" slots="2"/>
              <ranks program="master.dll" count="1"/>
              <ranks program="vb.dll" count="2" node="b"/>
              <ranks program="fs.dll" count="2"/>
            </computation>
            """;

        // Act
        var assignments = Placement.Assign(Parse(xml));

        // Assert
        Assert.Equal(["a", "b", "b", "a", "c"], assignments.Select(a => a.Node!.Name));
        Assert.Equal([0, 1, 2, 3, 4], assignments.Select(a => a.WorldRank));
        Assert.Equal([0, 1, 1, 2, 2], assignments.Select(a => a.Group.Index));
    }

    [Fact]
    public void Assign_Oversubscribed_SpreadsExtraRanksInProportionToSlots()
    {
        // Arrange: 6 slots for 9 ranks; the extra three go to the least loaded node per slot, earliest on ties.
        const string xml = """
            <computation name="c" oversubscribe="true" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="a:1" slots="4"/>
              <node name="b" agent="b:1" slots="2"/>
              <ranks program="p.dll" count="9"/>
            </computation>
            """;

        // Act
        string[] nodes = NodesOf(xml);

        // Assert: after a×4, b×2: a (4/4 vs 2/2 tie → a), b (5/4 > 2/2 → b), a (5/4 < 3/2 → a).
        Assert.Equal(["a", "a", "a", "a", "b", "b", "a", "b", "a"], nodes);
    }

    [Fact]
    public void Assign_PinnedBeyondSlotsWithOversubscribe_KeepsPinsAndFillsOthersElsewhere()
    {
        // Arrange
        const string xml = """
            <computation name="c" oversubscribe="true" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="a:1" slots="1"/>
              <node name="b" agent="b:1" slots="1"/>
              <ranks program="p.dll" count="3" node="a"/>
              <ranks program="q.dll" count="1"/>
            </computation>
            """;

        // Act
        string[] nodes = NodesOf(xml);

        // Assert
        Assert.Equal(["a", "a", "a", "b"], nodes);
    }

    [Fact]
    public void Assign_MapByNode_PutsOneRankOnEachNodeInTurnSkippingFullNodes()
    {
        // Arrange: c has one slot, so the third pass goes around it.
        const string xml = """
            <computation name="c" map-by="node" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="a:1" slots="3"/>
              <node name="b" agent="b:1" slots="2"/>
              <node name="c" agent="c:1" slots="1"/>
              <ranks program="p.dll" count="6"/>
            </computation>
            """;

        // Act
        string[] nodes = NodesOf(xml);

        // Assert
        Assert.Equal(["a", "b", "c", "a", "b", "a"], nodes);
    }

    [Fact]
    public void Assign_MapByNodeWithPinnedGroup_LeavesThePinnedSlotsAndOversubscribesByLoad()
    {
        // Arrange: b's two slots belong to the pinned group; the fifth unpinned rank finds every slot taken.
        const string xml = """
            <computation name="c" map-by="node" oversubscribe="true" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="a:1" slots="2"/>
              <node name="b" agent="b:1" slots="2"/>
              <node name="c" agent="c:1" slots="2"/>
              <ranks program="p.dll" count="5"/>
              <ranks program="q.dll" count="2" node="b"/>
            </computation>
            """;

        // Act
        string[] nodes = NodesOf(xml);

        // Assert: a, c, a, c, then the least loaded per slot (all 2/2: the earliest), then the pinned pair.
        Assert.Equal(["a", "c", "a", "c", "a", "b", "b"], nodes);
    }

    [Fact]
    public void Assign_LocalComputation_PutsEveryRankOnTheEmbeddedAgent()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <ranks program="p.dll" count="2"/>
              <ranks program="q.dll" count="1"/>
            </computation>
            """;

        // Act
        var assignments = Placement.Assign(Parse(xml));

        // Assert
        Assert.Equal(3, assignments.Length);
        Assert.All(assignments, a => Assert.Null(a.Node));
        Assert.Equal(["p.dll", "p.dll", "q.dll"], assignments.Select(a => a.Group.Program));
    }

    [Fact]
    public void Assign_SameComputationTwice_GivesSameResult()
    {
        // Arrange
        var computation = Parse("""
            <computation name="c" oversubscribe="true" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="a:1" slots="3"/>
              <node name="b" agent="b:1" slots="2"/>
              <ranks program="p.dll" count="4"/>
              <ranks program="q.dll" count="4" node="b"/>
            </computation>
            """);

        // Act
        var first = Placement.Assign(computation);
        var second = Placement.Assign(computation);

        // Assert
        Assert.Equal(first.AsEnumerable(), second);
    }
}

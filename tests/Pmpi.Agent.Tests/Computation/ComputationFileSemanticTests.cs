using Pmpi.Agent.Computation;
using static Pmpi.Agent.Tests.Computation.JobText;

namespace Pmpi.Agent.Tests.Computation;

/// <summary>The checks after the schema: each error must point at the attribute or element to blame.</summary>
public class ComputationFileSemanticTests
{

    /// <summary>
    /// Computations with one semantic error each: the case's name, the text, where the error must point (the only
    /// occurrence of the marker) and what its message must say.
    /// </summary>
    public static TheoryData<string, string, string, string> SingleErrors => new()
    {
        {
            "DuplicateNodeName_PointsAtSecondAndNamesFirst",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <node name="n1" agent="a:1" slots="4"/>
                  <node name="n2" agent="b:1"/>
                  <node name="n1" agent="c:1"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "name=\"n1\" agent=\"c:1\"",
            "node 'n1' is already declared at job.xml(2,4)"
        },
        {
            "DuplicateDomainName_PointsAtSecond",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <domain name="d" gateway="g1:1"/>
                  <domain name="d" gateway="g2:1"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "name=\"d\" gateway=\"g2:1\"",
            "domain 'd' is already declared"
        },
        {
            "NodeWithUnknownDomain_PointsAtDomainAttribute",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <domain name="campus-a" gateway="g:1"/>
                  <node name="n1" agent="a:1" domain="campus-b"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "domain=\"campus-b\"",
            "unknown domain 'campus-b' (declared: campus-a)"
        },
        {
            "NodeWithDomainButNoneDeclared_SaysNoneIsDeclared",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <node name="n1" agent="a:1" domain="lab"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "domain=\"lab\"",
            "no <domain> is declared"
        },
        {
            "TwoDomainsAndNodeWithoutDomain_PointsAtNode",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <domain name="a" gateway="ga:1"/>
                  <domain name="b" gateway="gb:1"/>
                  <node name="n1" agent="x:1"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "node name",
            "node 'n1' has no domain"
        },
        {
            "TwoDomainsOneWithoutGateway_PointsAtThatDomain",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <domain name="a" gateway="ga:1"/>
                  <domain name="b"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "domain name=\"b\"",
            "domain 'b' has no gateway"
        },
        {
            "ReachableUnknownDomain_PointsAtAttribute",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <domain name="a" gateway="ga:1" reachable="b c"/>
                  <domain name="b" gateway="gb:1"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "reachable=",
            "unknown domain 'c'"
        },
        {
            "RanksPinnedToUnknownNode_PointsAtNodeAttribute",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <node name="a1" agent="a:1" slots="2"/>
                  <ranks program="p.dll" node="b1"/>
                </computation>
                """,
            "node=\"b1\"",
            "unknown node 'b1' (declared: a1)"
        },
        {
            "RanksPinnedWithoutNodes_SaysLocalRunHasNoNodes",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <ranks program="p.dll" node="b1"/>
                </computation>
                """,
            "node=\"b1\"",
            "no <node> is declared"
        },
        // Four slots in total, but b1 alone has only two.
        {
            "PinnedRanksExceedNodeSlots_PointsAtGroup",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <node name="a1" agent="a:1" slots="2"/>
                  <node name="b1" agent="b:1" slots="2"/>
                  <ranks program="p.dll" count="3" node="b1"/>
                </computation>
                """,
            "ranks program",
            "3 ranks pinned to node 'b1' exceed its 2 slots"
        },
        {
            "ArgsAttributeAndArgElements_PointsAtFirstArg",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <ranks program="p.dll" args="1 2">
                    <arg>3</arg>
                    <arg>4</arg>
                  </ranks>
                </computation>
                """,
            "arg>3",
            "either the args attribute or <arg> elements"
        },
        {
            "ReservedEnvironmentVariable_PointsAtName",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <ranks program="p.dll">
                    <env name="PMPI_RANK" value="0"/>
                  </ranks>
                </computation>
                """,
            "name=\"PMPI_RANK\"",
            "reserved"
        },
        // Differing only in case still collides, as it would on Windows.
        {
            "DuplicateEnvironmentVariableInOneScope_PointsAtSecond",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <env name="Path" value="a"/>
                  <env name="PATH" value="b"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "name=\"PATH\"",
            "'PATH' is already set at job.xml(2,4)"
        },
        {
            "PortOutOfRange_PointsAtEndpoint",
            """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <node name="n1" agent="host:70000"/>
                  <ranks program="p.dll"/>
                </computation>
                """,
            "agent=",
            "port 70000"
        },
        {
            "ZeroTimeout_PointsAtTimeout",
            """
                <computation name="c" timeout="00:00:00" xmlns="urn:pmpi:computation:v1">
                  <ranks program="p.dll"/>
                </computation>
                """,
            "timeout=",
            "timeout must be positive"
        },
    };

#pragma warning disable xUnit1026 // the case's name is there to name the case in the results
    [Theory]
    [MemberData(nameof(SingleErrors))]
    public void Parse_OneSemanticError_PointsAtCulpritAndSaysWhy(string @case, string xml, string marker, string text)
#pragma warning restore xUnit1026
    {
        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, marker, text);
    }

    [Fact]
    public void Parse_MoreRanksThanSlots_PointsAtGroupThatCrossesAndNamesOption()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="a1" agent="a:1" slots="2"/>
              <node name="b1" agent="b:1" slots="2"/>
              <ranks program="first.dll" count="3"/>
              <ranks program="second.dll" count="2"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, "ranks program=\"second.dll\"", "5 ranks exceed the 4 slots");
        Assert.Contains("oversubscribe=\"true\"", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_MoreRanksThanSlotsWithOversubscribe_IsAccepted()
    {
        // Arrange
        const string xml = """
            <computation name="c" oversubscribe="true" xmlns="urn:pmpi:computation:v1">
              <node name="a1" agent="a:1" slots="2"/>
              <ranks program="p.dll" count="5" node="a1"/>
            </computation>
            """;

        // Act
        var computation = Parse(xml);

        // Assert
        Assert.Equal(5, computation.WorldSize);
    }

    [Fact]
    public void Parse_MoreRanksThanSlotsOnLocalRun_IsAccepted()
    {
        // Arrange: the embedded local agent's capacity is the machine's, unknown to the file.
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <ranks program="p.dll" count="64"/>
            </computation>
            """;

        // Act
        var computation = Parse(xml);

        // Assert
        Assert.Equal(64, computation.WorldSize);
    }

    [Fact]
    public void Parse_ProgramMissing_PointsAtProgramAndShowsResolvedPath()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <ranks program="present.dll"/>
              <ranks program="bin/missing.dll"/>
            </computation>
            """;
        string missing = Path.GetFullPath("bin/missing.dll");

        // Act
        var exception = Fail(xml, path => path != missing);

        // Assert
        AssertSingleError(exception, xml, "program=\"bin/missing.dll\"", $"program 'bin/missing.dll' not found (looked for {missing})");
    }

    [Fact]
    public void Parse_ProgramMissingHereInAComputationWithNodes_IsLeftToTheNodesAgents()
    {
        // Arrange: the ranks run on the nodes, whose agents check their programs; this machine need not have them.
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n" agent="n:1" slots="2"/>
              <ranks program="bin/only-on-n.dll" count="2"/>
            </computation>
            """;

        // Act
        var computation = ComputationFile.Parse(xml, FileName, _ => false);

        // Assert
        Assert.Equal(Path.GetFullPath("bin/only-on-n.dll"), computation.Ranks[0].ProgramPath);
    }

    /// <summary>A full path of the other family of systems than this one: a Windows path here on Linux, and the reverse.</summary>
    private static readonly string[] ForeignPrograms = OperatingSystem.IsWindows()
        ? ["/opt/ranks/app"]
        : [@"C:\ranks\app.exe", "D:/ranks/app.exe", @"\\server\share\app.exe"];

    [Fact]
    public void Parse_ProgramOfTheOtherSystemPinnedToANode_IsPassedAsWrittenWithNoDirectory()
    {
        foreach (var program in ForeignPrograms)
        {
            // Arrange: nothing exists on this machine, where such a path means nothing.
            string xml = $"""
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <node name="here" agent="a:1" slots="2"/>
                  <node name="there" agent="b:1" slots="2"/>
                  <ranks program="{program}" count="2" node="there"/>
                </computation>
                """;

            // Act
            var computation = ComputationFile.Parse(xml, FileName, _ => false);

            // Assert: the node's agent gets the path as written, and runs it in its own directory there.
            var group = Assert.Single(computation.Ranks);
            Assert.Equal(program, group.ProgramPath);
            Assert.Equal("", group.WorkingDirectory);
        }
    }

    [Fact]
    public void Parse_StagedGroup_StagedAndRunsInItsCopyUnlessItsOwnWorkdirSaysOtherwise()
    {
        // Arrange: the computation's workdir is this machine's; a staged group runs on nodes that may lack it.
        const string xml = """
            <computation name="c" workdir="/tmp/shared" xmlns="urn:pmpi:computation:v1">
              <ranks program="a.dll" stage="true"/>
              <ranks program="b.dll" stage="true" workdir="/tmp/b"/>
              <ranks program="c.dll" stage="false"/>
              <ranks program="d.dll"/>
            </computation>
            """;

        // Act
        var groups = Parse(xml).Ranks;

        // Assert
        Assert.Equal([true, true, false, false], groups.Select(group => group.Stage));
        Assert.Equal(["", Path.GetFullPath("/tmp/b"), Path.GetFullPath("/tmp/shared"), Path.GetFullPath("/tmp/shared")], groups.Select(group => group.WorkingDirectory));
    }

    [Fact]
    public void Parse_StagedProgramOfTheOtherSystem_PointsAtStageAndSaysItShipsThisMachinesFiles()
    {
        // Arrange
        string program = ForeignPrograms[0];
        string xml = $"""
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n" agent="a:1" slots="2"/>
              <ranks program="{program}" node="n" stage="true"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml, _ => false);

        // Assert
        AssertSingleError(exception, xml, "stage=", $"program '{program}' is a path on {(OperatingSystem.IsWindows() ? "Unix" : "Windows")} nodes, but a staged program is shipped from this machine's files; stage the program's directory as this machine sees it");
    }

    [Fact]
    public void Parse_ProgramOfTheOtherSystemNotPinned_PointsAtProgramAndSaysToPinIt()
    {
        // Arrange
        string program = ForeignPrograms[0];
        string xml = $"""
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n" agent="a:1" slots="2"/>
              <ranks program="{program}" count="2"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml, _ => false);

        // Assert
        AssertSingleError(exception, xml, "program=", $"program '{program}' is a path on {(OperatingSystem.IsWindows() ? "Unix" : "Windows")} nodes, which this machine cannot check or run; pin these ranks to the node that has it with node=\"...\"");
    }

    [Theory]
    [InlineData("0")]
    [InlineData("-3")]
    public void Parse_CountBelowOne_PointsAtCount(string count)
    {
        // Arrange
        string xml = $"""
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <ranks program="p.dll" count="{count}"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, "count=", $"count must be at least 1, found {count}");
    }

    [Fact]
    public void Parse_GroupOverridesVariableInOtherCase_ReplacesIt()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <env name="Path" value="a"/>
              <ranks program="p.dll">
                <env name="PATH" value="b"/>
              </ranks>
            </computation>
            """;

        // Act
        var environment = Parse(xml).Ranks[0].Environment;

        // Assert
        Assert.Equal(new Dictionary<string, string> { ["PATH"] = "b" }, environment);
    }

    [Fact]
    public void Parse_SeveralSemanticErrors_ReportsAllInFileOrder()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n1" agent="a:1" domain="nowhere"/>
              <node name="n1" agent="b:1"/>
              <ranks program="app.dll" count="0" node="n9"/>
              <ranks program="other.dll" count="0"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml, _ => false);

        // Assert
        Assert.Equal(
            [
                Locate(xml, "domain=\"nowhere\""),
                Locate(xml, "name=\"n1\" agent=\"b:1\""),
                Locate(xml, "count=\"0\" node"),
                Locate(xml, "node=\"n9\""),
                Locate(xml, "count=\"0\"/>"),
            ],
            exception.Errors.Select(e => e.Location));
        string[] lines = exception.Message.Split(System.Environment.NewLine);
        Assert.Equal(5, lines.Length);
        Assert.StartsWith("job.xml(2,31): error: ", lines[0], StringComparison.Ordinal);
    }
}

using Pmpi.Agent.Computation;
using static Pmpi.Agent.Tests.Computation.JobText;

namespace Pmpi.Agent.Tests.Computation;

public class ComputationFileTests
{
    [Fact]
    public void Parse_NoNodes_IsLocalWithDefaults()
    {
        // Arrange
        const string xml = """
            <computation name="pi" xmlns="urn:pmpi:computation:v1">
              <ranks program="Pi.dll"/>
            </computation>
            """;

        // Act
        var computation = Parse(xml);

        // Assert
        Assert.Equal("pi", computation.Name);
        Assert.True(computation.IsLocal);
        Assert.False(computation.Oversubscribe);
        Assert.Equal(RankMapping.Slot, computation.Mapping);
        Assert.Null(computation.Timeout);
        var group = Assert.Single(computation.Ranks);
        Assert.Equal(1, group.Count);
        Assert.Equal(1, computation.WorldSize);
        Assert.Empty(group.Arguments);
        Assert.Empty(group.Environment);
        Assert.Null(group.Node);
        Assert.Equal(Path.GetFullPath("Pi.dll"), group.ProgramPath);
        Assert.Equal(Directory.GetCurrentDirectory(), group.WorkingDirectory);
        Assert.Equal(new SourceLocation(FileName, 1, 2), computation.Location);
    }

    [Fact]
    public void Parse_FullComputation_BuildsModel()
    {
        // Arrange
        string dir = Path.Combine(Path.GetTempPath(), "jobs");
        string file = Path.Combine(dir, "job.xml");
        const string xml = """
            <computation name="matmul" timeout="1.02:03:04" oversubscribe="true" map-by="node" workdir="work" xmlns="urn:pmpi:computation:v1">
              <domain name="campus-a" gateway="gw-a:7400" reachable="campus-b"/>
              <domain name="campus-b" gateway="[fd00::1]:7400"/>
              <node name="a1" agent="10.1.0.2:7300" domain="campus-a" slots="2"/>
              <node name="b1" agent="10.2.0.2:7300" domain="campus-b"/>
              <env name="SHARED" value="1"/>
              <env name="OVERRIDDEN" value="computation"/>
              <ranks program="bin/Master.dll" args=" 2400  1200 500 "/>
              <ranks program="/opt/Worker.dll" count="3" node="b1" workdir="/tmp/w">
                <env name="OVERRIDDEN" value="group"/>
                <arg>a b</arg>
                <arg></arg>
              </ranks>
            </computation>
            """;

        // Act
        var computation = ComputationFile.Parse(xml, file, _ => true);

        // Assert
        Assert.Equal(new TimeSpan(1, 2, 3, 4), computation.Timeout);
        Assert.True(computation.Oversubscribe);
        Assert.Equal(RankMapping.Node, computation.Mapping);
        Assert.Equal(["campus-a", "campus-b"], computation.Domains.Select(d => d.Name));
        Assert.Equal(["campus-b"], computation.Domains[0].Reachable.AsEnumerable());
        Assert.Equal("[fd00::1]:7400", computation.Domains[1].Gateway);
        Assert.Equal(new NodeDefinition("a1", "10.1.0.2:7300", "campus-a", 2, new(file, 4, 4)), computation.Nodes[0]);
        Assert.Equal(1, computation.Nodes[1].Slots);
        Assert.Equal(4, computation.WorldSize);

        var master = computation.Ranks[0];
        Assert.Equal(0, master.Index);
        Assert.Equal(Path.Combine(dir, "bin", "Master.dll"), master.ProgramPath);
        Assert.Equal(["2400", "1200", "500"], master.Arguments.AsEnumerable());
        Assert.Equal(Path.Combine(dir, "work"), master.WorkingDirectory);
        Assert.Equal(new Dictionary<string, string> { ["OVERRIDDEN"] = "computation", ["SHARED"] = "1" }, master.Environment);

        var workers = computation.Ranks[1];
        Assert.Equal(1, workers.Index);
        Assert.Equal("/opt/Worker.dll", workers.Program);
        Assert.Equal(Path.GetFullPath("/opt/Worker.dll"), workers.ProgramPath);
        Assert.Equal("b1", workers.Node);
        Assert.Equal(["a b", ""], workers.Arguments.AsEnumerable());
        Assert.Equal(Path.GetFullPath("/tmp/w"), workers.WorkingDirectory);
        Assert.Equal(new Dictionary<string, string> { ["OVERRIDDEN"] = "group", ["SHARED"] = "1" }, workers.Environment);
    }

    [Fact]
    public void Parse_MapByOtherThanSlotOrNode_FileErrorAtTheAttribute()
    {
        // Arrange
        const string xml = """
            <computation name="c" map-by="core" xmlns="urn:pmpi:computation:v1">
              <ranks program="p.dll"/>
            </computation>
            """;

        // Act
        var error = Fail(xml);

        // Assert: the attribute and the values it takes.
        AssertSingleError(error, xml, "map-by", "'map-by' attribute is invalid");
        Assert.Contains("Expected slot or node.", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_OneDomainAndNodeWithoutDomain_NodeJoinsThatDomain()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <domain name="lab"/>
              <node name="n1" agent="n1:7300"/>
              <ranks program="p.dll"/>
            </computation>
            """;

        // Act
        var computation = Parse(xml);

        // Assert
        Assert.Null(computation.Domains[0].Gateway);
        Assert.Equal("lab", computation.Nodes[0].Domain);
    }

    [Fact]
    public void Parse_MalformedXml_ReportsLineAndColumn()
    {
        // Arrange: <node> is never closed, so the parser trips over </computation>.
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n1" agent="n1:7300">
              <ranks program="p.dll"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        var error = Assert.Single(exception.Errors);
        Assert.Equal(Locate(xml, "computation>"), error.Location);
        Assert.Contains("'node'", error.Message, StringComparison.Ordinal);
        Assert.DoesNotMatch(@"Line \d+, position \d+\.$", error.Message);
        Assert.StartsWith("job.xml(4,3): error: ", exception.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_UnknownAttribute_ReportsLineAndColumn()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n1" agent="n1:7300" cores="4"/>
              <ranks program="p.dll"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, "cores=", "'cores' attribute is not declared");
    }

    [Fact]
    public void Parse_BadSlotsValue_ReportsLineAndColumn()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n1" agent="n1:7300"
                    slots="two"/>
              <ranks program="p.dll"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, "slots=", "'slots' attribute is invalid");
    }

    [Theory]
    [InlineData("0")]
    [InlineData("-1")]
    public void Parse_SlotsBelowOne_IsSchemaError(string slots)
    {
        // Arrange
        string xml = $"""
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n1" agent="n1:7300" slots="{slots}"/>
              <ranks program="p.dll"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, "slots=", "slots");
    }

    [Fact]
    public void Parse_SeveralSchemaErrors_ReportsAllInFileOrder()
    {
        // Arrange
        const string xml = """
            <computation name="c" timeout="10 minutes" xmlns="urn:pmpi:computation:v1">
              <node name="n1" agent="no port"/>
              <nodes/>
              <ranks/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        Assert.Equal(
            [Locate(xml, "timeout=").Line, Locate(xml, "agent=").Line, Locate(xml, "nodes/>").Line],
            exception.Errors.Select(e => e.Location.Line).Distinct().Take(3));
        Assert.Contains(exception.Errors, e => e.Location == Locate(xml, "timeout="));
        Assert.Contains(exception.Errors, e => e.Location == Locate(xml, "agent="));
        Assert.Contains(exception.Errors, e => e.Location == Locate(xml, "nodes/>"));
        Assert.Equal(exception.Errors.Count, exception.Message.Split('\n').Length);
    }

    [Fact]
    public void Parse_NoRanks_IsSchemaError()
    {
        // Arrange
        const string xml = """
            <computation name="c" xmlns="urn:pmpi:computation:v1">
              <node name="n1" agent="n1:7300"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        var error = Assert.Single(exception.Errors);
        Assert.Contains("ranks", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_RootWithoutNamespace_SaysWhichNamespace()
    {
        // Arrange
        const string xml = """
            <computation name="c">
              <ranks program="p.dll"/>
            </computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, "computation name", "xmlns=\"urn:pmpi:computation:v1\"");
    }

    [Fact]
    public void Parse_Dtd_IsRejected()
    {
        // Arrange: entity expansion is a denial-of-service vector; job files never need a DTD.
        const string xml = """
            <!DOCTYPE computation [<!ENTITY x "y">]>
            <computation name="c" xmlns="urn:pmpi:computation:v1"><ranks program="&x;"/></computation>
            """;

        // Act
        var exception = Fail(xml);

        // Assert
        AssertSingleError(exception, xml, "<!DOCTYPE", "DTDs (<!DOCTYPE ...>) are not allowed");
    }

    [Fact]
    public void Load_FileOnDisk_ResolvesProgramAgainstFileDirectory()
    {
        // Arrange
        string dir = Directory.CreateTempSubdirectory("pmpi-job-").FullName;
        try
        {
            Directory.CreateDirectory(Path.Combine(dir, "bin"));
            File.WriteAllText(Path.Combine(dir, "bin", "Rank.dll"), "");
            string file = Path.Combine(dir, "job.xml");
            File.WriteAllText(file, """
                <computation name="c" xmlns="urn:pmpi:computation:v1">
                  <ranks program="bin/Rank.dll" count="2"/>
                </computation>
                """);

            // Act
            var computation = ComputationFile.Load(file);

            // Assert
            Assert.Equal(Path.Combine(dir, "bin", "Rank.dll"), computation.Ranks[0].ProgramPath);
            Assert.Equal(file, computation.Location.File);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void OpenSchema_Always_ReturnsTheEmbeddedXsd()
    {
        // Act
        using var reader = new StreamReader(ComputationFile.OpenSchema());

        // Assert
        Assert.Contains("targetNamespace=\"urn:pmpi:computation:v1\"", reader.ReadToEnd(), StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("count=\"99999999999\"", "count=", "count")]
    [InlineData("count=\"-99999999999\"", "count=", "count")]
    public void Parse_NumberOverflowsInt_FileErrorAtTheAttributeNamingTheRange(string attribute, string marker, string mentions)
    {
        // Arrange
        string xml = $"""
            <computation name="huge" xmlns="urn:pmpi:computation:v1">
              <ranks program="Pi.dll" {attribute}/>
            </computation>
            """;

        // Act
        var error = Fail(xml);

        // Assert
        AssertSingleError(error, xml, marker, mentions);
        Assert.Contains("not a whole number from -2,147,483,648 to 2,147,483,647", error.Errors[0].Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Parse_SlotsOverflowInt_FileErrorAtTheAttribute()
    {
        // Arrange
        const string xml = """
            <computation name="huge" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="h:1" slots="4294967296"/>
              <ranks program="Pi.dll"/>
            </computation>
            """;

        // Act
        var error = Fail(xml);

        // Assert
        AssertSingleError(error, xml, "slots=", "not a whole number");
    }

    [Fact]
    public void Parse_CountsSummingPastTheWorldLimit_FileErrorAtTheGroupThatCrossesIt()
    {
        // Arrange: each count fits an int, the sum does not (nor does it fit the world limit).
        const string xml = """
            <computation name="huge" oversubscribe="true" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="h:1" slots="2000000000"/>
              <ranks program="Pi.dll" count="1000000"/>
              <ranks program="Pi.dll" count="2000000000"/>
            </computation>
            """;

        // Act
        var error = Fail(xml);

        // Assert
        AssertSingleError(error, xml, "ranks program=\"Pi.dll\" count=\"2000000000", "more than 1,048,576 ranks");
    }

    [Fact]
    public void Parse_OversubscribedBeyondEightPerSlot_FileErrorNamingTheCap()
    {
        // Arrange
        const string xml = """
            <computation name="crowded" oversubscribe="true" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="h:1" slots="2"/>
              <ranks program="Pi.dll" count="17"/>
            </computation>
            """;

        // Act
        var error = Fail(xml);

        // Assert
        AssertSingleError(error, xml, "ranks program", "8 per slot");
    }

    [Fact]
    public void Parse_TextLargerThanTheLimit_FileErrorInPmpisWords()
    {
        // Arrange: a comment that pushes the text past 4,194,304 characters.
        string xml = $"""
            <computation name="big" xmlns="urn:pmpi:computation:v1">
              <!-- {new string('x', ComputationFile.MaxCharacters)} -->
              <ranks program="Pi.dll"/>
            </computation>
            """;

        // Act
        var error = Fail(xml);

        // Assert
        var single = Assert.Single(error.Errors);
        Assert.Equal(ComputationFile.TooLargeMessage, single.Message);
        Assert.Contains("4,194,304 characters", single.Message, StringComparison.Ordinal);
        Assert.DoesNotContain("MaxCharactersInDocument", single.Message, StringComparison.Ordinal);
    }
}

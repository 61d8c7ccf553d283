using Pmpi.Agent.Computation;

namespace Pmpi.Agent.Tests.Computation;

/// <summary>The sample files in examples/jobs (copied next to the tests) must keep validating.</summary>
public class ExampleJobsTests
{
    private static readonly string JobsDirectory = Path.Combine(AppContext.BaseDirectory, "jobs");

    public static TheoryData<string> Files =>
        new(Directory.GetFiles(JobsDirectory, "*.xml").Select(Path.GetFileName).OfType<string>().Order(StringComparer.Ordinal));

    [Theory]
    [MemberData(nameof(Files))]
    public void Load_ShippedSample_Validates(string file)
    {
        // Act: the rank programs need not be built for this; only the file is under test.
        var computation = ComputationFile.Load(Path.Combine(JobsDirectory, file), _ => true);

        // Assert
        Assert.NotEmpty(computation.Ranks);
        Assert.Equal(computation.WorldSize, Placement.Assign(computation).Length);
    }

    [Theory]
    [InlineData("local-pi.xml")]
    [InlineData("two-nodes.xml")]
    [InlineData("two-domains.xml")]
    public void Files_DocumentedSample_IsCopiedForTesting(string file)
    {
        // Assert: guards against the copy into the test output silently matching nothing.
        Assert.True(File.Exists(Path.Combine(JobsDirectory, file)), $"{file} is missing from {JobsDirectory}");
    }

    [Fact]
    public void Assign_TwoDomainsSample_MatchesItsComment()
    {
        // Arrange
        var computation = ComputationFile.Load(Path.Combine(JobsDirectory, "two-domains.xml"), _ => true);

        // Act
        var nodes = Placement.Assign(computation).Select(a => a.Node!.Name);

        // Assert
        Assert.Equal(["a1", "b1", "b1", "a1", "b1"], nodes);
    }
}

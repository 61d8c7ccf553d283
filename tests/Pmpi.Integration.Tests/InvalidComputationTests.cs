using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>`pmpi run` rejects a broken computation file with its position, exit code 2, and launches nothing.</summary>
public sealed class InvalidComputationTests
{
    /// <summary>`pmpi run`'s exit code for an invalid computation file.</summary>
    private const int InvalidComputationExitCode = 2;

    // {0}: the test rank program; {1}: the marker file a launched rank would write. The error is expected on the given
    // line, at the column where the given text starts (columns depend on the paths substituted in).
    public static TheoryData<string, string, int, string, string> Cases => new()
    {
        {
            "malformed",
            """
            <computation name="broken" xmlns="urn:pmpi:computation:v1">
              <ranks program="{0}" count="2" args="marker {1}">
            </computation>
            """,
            3, "computation>", "computation"
        },
        {
            "unknown-node",
            """
            <computation name="lost" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="127.0.0.1:9" slots="4"/>
              <ranks program="{0}" count="2" args="marker {1}" node="nowhere"/>
            </computation>
            """,
            3, "node=", "nowhere"
        },
        {
            "too-many-ranks",
            """
            <computation name="crowded" xmlns="urn:pmpi:computation:v1">
              <node name="a" agent="127.0.0.1:9" slots="1"/>
              <node name="b" agent="127.0.0.1:10" slots="1"/>
              <ranks program="{0}" count="3" args="marker {1}"/>
            </computation>
            """,
            4, "ranks", "slots"
        },
        {
            "beyond-local-slots",
            """
            <computation name="crowded-here" xmlns="urn:pmpi:computation:v1">
              <ranks program="{0}" count="1000000" args="marker {1}"/>
            </computation>
            """,
            2, "ranks", "slots of the local agent"
        },
        {
            "count-overflows",
            """
            <computation name="overflow" xmlns="urn:pmpi:computation:v1">
              <ranks program="{0}" count="99999999999" args="marker {1}"/>
            </computation>
            """,
            2, "count=", "not a whole number"
        },
        {
            "missing-program",
            """
            <computation name="absent" xmlns="urn:pmpi:computation:v1">

              <ranks program="no-such-program.dll" count="1" args="marker {1}"/>
            </computation>
            """,
            3, "program=", "no-such-program.dll"
        },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public async Task Run_InvalidComputationFile_ExitsWithCode2AtTheFaultAndLaunchesNothing(string name, string template, int line, string at, string mentions)
    {
        // Arrange
        using var scratch = new ScratchDirectory();
        var marker = Path.Combine(scratch.Path, "launched.txt");
        var text = template.Replace("{0}", PmpiCli.TestRanksDll, StringComparison.Ordinal).Replace("{1}", marker, StringComparison.Ordinal);
        var file = scratch.Write($"{name}.xml", text);
        int column = text.Split('\n')[line - 1].IndexOf(at, StringComparison.Ordinal) + 1;

        // Act
        await using var run = PmpiCli.Start(["run", file]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == InvalidComputationExitCode, $"pmpi run exited with {code}.\n{run.Transcript}");
        var error = run.Stderr.FirstOrDefault(l => l.StartsWith($"{file}({line},{column}): error:", StringComparison.Ordinal));
        Assert.True(error is not null, $"No error at line {line}, column {column} of {file}.\n{run.Transcript}");
        Assert.Contains(mentions, error, StringComparison.Ordinal);
        Assert.False(File.Exists(marker), "A rank was launched for an invalid computation.");
        Assert.DoesNotContain(run.Stderr, l => l.Contains("launched", StringComparison.Ordinal));
        Assert.Empty(run.Stdout);
    }
}

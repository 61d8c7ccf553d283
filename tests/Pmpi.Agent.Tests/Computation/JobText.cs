using Pmpi.Agent.Computation;

namespace Pmpi.Agent.Tests.Computation;

/// <summary>Helpers to parse computation text in tests and to find where a piece of it sits.</summary>
internal static class JobText
{
    public const string FileName = "job.xml";

    /// <summary>Parses with every program taken to exist, so tests need no files on disk.</summary>
    public static ComputationDefinition Parse(string xml) => ComputationFile.Parse(xml, FileName, _ => true);

    /// <summary>Parses text that must fail, returning the exception.</summary>
    public static ComputationFileException Fail(string xml, Func<string, bool>? programExists = null) =>
        Assert.Throws<ComputationFileException>(() => ComputationFile.Parse(xml, FileName, programExists ?? (_ => true)));

    /// <summary>
    /// The 1-based line and column of the only occurrence of <paramref name="marker"/>: where the parser should point
    /// when the marker starts at the blamed attribute or element name.
    /// </summary>
    public static SourceLocation Locate(string xml, string marker)
    {
        int index = xml.IndexOf(marker, StringComparison.Ordinal);
        Assert.True(index >= 0, $"marker '{marker}' not in the text");
        Assert.True(xml.IndexOf(marker, index + 1, StringComparison.Ordinal) < 0, $"marker '{marker}' occurs twice");
        int lineStart = index == 0 ? 0 : xml.LastIndexOf('\n', index - 1) + 1;
        int line = 1 + xml.AsSpan(0, index).Count('\n');
        return new SourceLocation(FileName, line, index - lineStart + 1);
    }

    /// <summary>Asserts that exactly one error exists, at <paramref name="marker"/>, with a message containing <paramref name="text"/>.</summary>
    public static void AssertSingleError(ComputationFileException exception, string xml, string marker, string text)
    {
        var error = Assert.Single(exception.Errors);
        Assert.Equal(Locate(xml, marker), error.Location);
        Assert.Contains(text, error.Message, StringComparison.OrdinalIgnoreCase);
    }
}

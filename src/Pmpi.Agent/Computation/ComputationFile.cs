using System.Text.RegularExpressions;
using System.Xml;
using System.Xml.Linq;
using System.Xml.Schema;
using Pmpi.Agent.Computation.Internal;

namespace Pmpi.Agent.Computation;

/// <summary>
/// Reads computation files (<c>pmpi run job.xml</c>): XML well-formedness, then the embedded schema
/// (computation.xsd), then semantic checks. Every error of a phase is collected with its file, line and column; a later
/// phase runs only when the earlier ones found nothing, since its checks would trip over the same faults again.
/// </summary>
public static partial class ComputationFile
{
    /// <summary>The XML namespace of version 1 of the format; the root element must be in it.</summary>
    public const string Namespace = "urn:pmpi:computation:v1";

    private const string SchemaResourceName = "Pmpi.Agent.Computation.computation.xsd";

    /// <summary>
    /// The longest computation file PMPI reads: 4,194,304 characters (4 MiB of ASCII). Job files are a few kilobytes;
    /// the cap stops a mistaken or hostile submission from exhausting the master.
    /// </summary>
    public const int MaxCharacters = 4 * 1024 * 1024;

    /// <summary>The most ranks one computation may have: 1,048,576.</summary>
    public const int MaxWorldSize = Rpc.Security.JobTickets.MaxJobRanks;

    /// <summary>What PMPI says of a file over <see cref="MaxCharacters"/>, here and where `pmpi run` checks a file's size first.</summary>
    public static string TooLargeMessage => $"the computation file is larger than {MaxCharacters:N0} characters (4 MiB), the most PMPI reads; a computation file names programs and nodes, not data";

    private static readonly Lazy<XmlSchemaSet> Schemas = new(LoadSchemas);

    /// <summary>
    /// Reads and validates the computation file at <paramref name="path"/>. Relative program and working directory
    /// paths are resolved against the file's directory.
    /// </summary>
    /// <param name="path">The file; errors name it as given.</param>
    /// <param name="programExists">
    /// Decides whether a resolved program path exists, asked only of a computation without nodes, whose ranks run on
    /// this machine (with nodes, each node's agent checks its ranks' programs when it launches them). Defaults to
    /// <see cref="File.Exists(string)"/>; tests pass their own.
    /// </param>
    /// <returns>The validated computation.</returns>
    /// <exception cref="ComputationFileException">The file is malformed, invalid or inconsistent.</exception>
    /// <exception cref="IOException">The file cannot be read.</exception>
    public static ComputationDefinition Load(string path, Func<string, bool>? programExists = null)
    {
        ArgumentException.ThrowIfNullOrEmpty(path);
        using var stream = File.OpenRead(path);
        // A stream rather than text, so the reader honours the file's encoding declaration.
        return Read(settings => XmlReader.Create(stream, settings), path, programExists, () => File.ReadAllText(path));
    }

    /// <summary>
    /// Validates computation file text. Relative paths are resolved against the directory of
    /// <paramref name="fileName"/> (the current directory for a bare name).
    /// </summary>
    /// <param name="text">The XML.</param>
    /// <param name="fileName">The name errors carry and relative paths start from.</param>
    /// <param name="programExists">As for <see cref="Load"/>.</param>
    /// <returns>The validated computation.</returns>
    /// <exception cref="ComputationFileException">The text is malformed, invalid or inconsistent.</exception>
    public static ComputationDefinition Parse(string text, string fileName, Func<string, bool>? programExists = null)
    {
        ArgumentNullException.ThrowIfNull(text);
        ArgumentException.ThrowIfNullOrEmpty(fileName);
        return Read(settings => XmlReader.Create(new StringReader(text), settings), fileName, programExists, () => text);
    }

    /// <summary>Opens the embedded schema, e.g. for <c>pmpi</c> to write it out for editors.</summary>
    public static Stream OpenSchema() =>
        typeof(ComputationFile).Assembly.GetManifestResourceStream(SchemaResourceName)
        ?? throw new InvalidOperationException($"The embedded resource {SchemaResourceName} is missing from Pmpi.Agent.");

    private static ComputationDefinition Read(
        Func<XmlReaderSettings, XmlReader> open, string fileName, Func<string, bool>? programExists, Func<string> text)
    {
        var errors = new List<ComputationFileError>();
        var settings = new XmlReaderSettings
        {
            ValidationType = ValidationType.Schema,
            Schemas = Schemas.Value,
            // Warnings only repeat "no schema information" for content under an element already reported as invalid.
            ValidationFlags = XmlSchemaValidationFlags.None,
            DtdProcessing = DtdProcessing.Prohibit,
            XmlResolver = null,
            MaxCharactersInDocument = MaxCharacters,
            IgnoreComments = true,
            IgnoreProcessingInstructions = true,
        };
        settings.ValidationEventHandler += (_, e) =>
        {
            if (e.Severity == XmlSeverityType.Error)
            {
                errors.Add(new(new(fileName, e.Exception.LineNumber, e.Exception.LinePosition), Humanize(e.Message)));
            }
        };

        XDocument? document = null;
        using (var reader = open(settings))
        {
            try
            {
                document = XDocument.Load(reader, LoadOptions.SetLineInfo);
            }
            catch (XmlException e)
            {
                // Schema errors met before the break are mostly its echoes (an unclosed element "contains" its
                // siblings), so the well-formedness error stands alone.
                errors.Clear();
                errors.Add(WellFormednessError(e, fileName, text));
            }
        }

        if (document?.Root is { } root && root.Name != XName.Get("computation", Namespace))
        {
            // The validator is silent about elements of namespaces it has no schema for, so say it here; nothing below
            // the root can be checked meaningfully.
            errors.Clear();
            errors.Add(new(At(fileName, root),
                $"the root element must be <computation xmlns=\"{Namespace}\">, found <{root.Name.LocalName}> in namespace '{root.Name.NamespaceName}'"));
        }

        if (errors.Count > 0 || document?.Root is null) throw Fail(errors);

        var checker = new ComputationReader(fileName, programExists ?? File.Exists);
        var computation = checker.Read(document.Root);
        if (checker.Errors.Count > 0) throw Fail(checker.Errors);
        return computation!;
    }

    internal static SourceLocation At(string fileName, IXmlLineInfo node) => new(fileName, node.LineNumber, node.LinePosition);

    private static ComputationFileException Fail(List<ComputationFileError> errors)
    {
        // Sorted by position, stable, so the list reads top to bottom like the file.
        var sorted = errors.OrderBy(e => e.Location.Line).ThenBy(e => e.Location.Column).ToArray();
        return new ComputationFileException(sorted);
    }

    private static ComputationFileError WellFormednessError(XmlException e, string fileName, Func<string> text)
    {
        if (e.LineNumber == 0 && e.Message.Contains("DTD", StringComparison.Ordinal))
        {
            // DTDs are refused against entity-expansion attacks. .NET reports that without a position (and advises a
            // reader setting the user cannot change), so the declaration is located in the text.
            string source = text();
            int at = Math.Max(source.IndexOf("<!DOCTYPE", StringComparison.Ordinal), 0);
            int lineStart = at == 0 ? 0 : source.LastIndexOf('\n', at - 1) + 1;
            var location = new SourceLocation(fileName, 1 + source.AsSpan(0, at).Count('\n'), at - lineStart + 1);
            return new ComputationFileError(location, "DTDs (<!DOCTYPE ...>) are not allowed in computation files");
        }
        // .NET's own wording names a reader setting the user cannot change.
        if (e.Message.Contains(nameof(XmlReaderSettings.MaxCharactersInDocument), StringComparison.Ordinal))
            return new ComputationFileError(new(fileName, e.LineNumber, e.LinePosition), TooLargeMessage);
        return new ComputationFileError(new(fileName, e.LineNumber, e.LinePosition), StripPosition(e.Message));
    }

    // What each pattern-restricted type of computation.xsd accepts: the validator only says "the Pattern constraint failed".
    private static readonly (string Type, string Expected)[] PatternHints =
    [
        ("nameType", "a name of letters, digits, '.', '_' and '-' that starts and ends with a letter or digit"),
        ("endpointType", "host:port, e.g. node1:7300, 10.0.0.2:7300 or [fd00::2]:7300"),
        ("timeoutType", "a duration [d.]hh:mm:ss, e.g. 00:10:00"),
        ("envNameType", "letters, digits and '_', not starting with a digit"),
    ];

    // What each enumerated type accepts: the validator only says "the Enumeration constraint failed".
    private static readonly (string Type, string Expected)[] EnumerationHints =
    [
        ("mappingType", "slot or node"),
    ];

    // The validator qualifies every name with the (only) namespace, which buries the point of the message.
    private static string Humanize(string message)
    {
        message = message.Replace($" in namespace '{Namespace}'", "", StringComparison.Ordinal)
            .Replace($"{Namespace}:", "", StringComparison.Ordinal)
            .Replace("http://www.w3.org/2001/XMLSchema:", "", StringComparison.Ordinal);
        // A number out of range: say the range, not .NET's type name.
        message = Int32Overflow().Replace(message, "'$1' is not a whole number from -2,147,483,648 to 2,147,483,647.");
        foreach (var (type, expected) in PatternHints)
        {
            if (message.Contains($"datatype '{type}'", StringComparison.Ordinal))
            {
                message = message.Replace("The Pattern constraint failed.", $"Expected {expected}.", StringComparison.Ordinal);
            }
        }
        foreach (var (type, expected) in EnumerationHints)
        {
            if (message.Contains($"datatype '{type}'", StringComparison.Ordinal))
            {
                message = message.Replace("The Enumeration constraint failed.", $"Expected {expected}.", StringComparison.Ordinal);
            }
        }
        return message;
    }

    // XmlException appends " Line n, position m." to its message; the location is already in the error's prefix.
    private static string StripPosition(string message) => PositionSuffix().Replace(message, "");

    [GeneratedRegex(@"The string '([^']*)' is not a valid Int32 value\.")]
    private static partial Regex Int32Overflow();

    [GeneratedRegex(@"\s*Line \d+, position \d+\.$")]
    private static partial Regex PositionSuffix();

    private static XmlSchemaSet LoadSchemas()
    {
        using var stream = OpenSchema();
        using var reader = XmlReader.Create(stream, new XmlReaderSettings { DtdProcessing = DtdProcessing.Prohibit, XmlResolver = null });
        var set = new XmlSchemaSet { XmlResolver = null };
        set.Add(Namespace, reader);
        set.Compile();
        return set;
    }
}

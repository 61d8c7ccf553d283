namespace Pmpi.Agent.Computation;

/// <summary>One problem found in a computation file.</summary>
/// <param name="Location">Where the problem is.</param>
/// <param name="Message">What is wrong, and where it helps, what to change.</param>
public sealed record ComputationFileError(SourceLocation Location, string Message)
{
    /// <summary>Formats as <c>file(line,column): error: message</c>.</summary>
    public override string ToString() => $"{Location}: error: {Message}";
}

/// <summary>
/// Thrown when a computation file is malformed, violates the schema or fails the semantic checks. Carries every error
/// found, not only the first, so a user fixes a file in one round.
/// </summary>
public sealed class ComputationFileException : Exception
{
    /// <summary>Creates the exception; its message lists every error, one per line.</summary>
    public ComputationFileException(IReadOnlyList<ComputationFileError> errors)
        : base(Format(errors)) => Errors = errors;

    /// <summary>The errors, in file order.</summary>
    public IReadOnlyList<ComputationFileError> Errors { get; }

    private static string Format(IReadOnlyList<ComputationFileError> errors)
    {
        ArgumentNullException.ThrowIfNull(errors);
        return string.Join(System.Environment.NewLine, errors);
    }
}

using System.CommandLine.Parsing;

namespace Pmpi.Cli;

/// <summary>Agent and master addresses on the command line: host:port, or http://host:port.</summary>
internal static class AgentAddress
{
    /// <summary>The address <paramref name="text"/> names, or null when it names none.</summary>
    public static Uri? TryParse(string text)
    {
        var candidate = text.Contains("://", StringComparison.Ordinal) ? text : $"http://{text}";
        return Uri.TryCreate(candidate, UriKind.Absolute, out var address) && address.Scheme is "http" or "https" ? address : null;
    }

    /// <summary>A System.CommandLine parser for an option holding one address; reports a malformed one as a usage error.</summary>
    public static Uri? Parse(ArgumentResult result)
    {
        var text = result.Tokens.Single().Value;
        var address = TryParse(text);
        if (address is null) result.AddError($"'{text}' is not an agent address: expected host:port or http://host:port.");
        return address;
    }
}

using Pmpi.Rpc.Security;

namespace Pmpi.Cli;

/// <summary>Agent and master addresses on the command line: host:port, or a full http(s)://host:port.</summary>
internal static class AgentAddress
{
    /// <summary>The address <paramref name="text"/> names, with <paramref name="security"/>'s scheme when it gives none; null when it names none.</summary>
    public static Uri? TryParse(string text, RpcSecurity security)
    {
        var candidate = text.Contains("://", StringComparison.Ordinal) ? text : $"{security.Scheme}://{text}";
        return Uri.TryCreate(candidate, UriKind.Absolute, out var address) && address.Scheme is "http" or "https" ? address : null;
    }
}

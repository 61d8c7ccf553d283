using System.CommandLine;
using Pmpi.Rpc.Security;

namespace Pmpi.Cli;

/// <summary>
/// `--credentials DIR` and `--insecure`, shared by the commands that talk to or run a cluster's daemons: which
/// <see cref="RpcSecurity"/> to use, or why none can be chosen.
/// </summary>
internal sealed class SecurityOptions
{
    public Option<string?> Credentials { get; } = new("--credentials")
    {
        Description = $"The cluster credential directory (`pmpi cluster init` makes it); defaults to ${ClusterCredentials.EnvironmentVariable}.",
    };

    public Option<bool> Insecure { get; } = new("--insecure")
    {
        Description = "No TLS and no authentication: every caller is accepted in cleartext. Only on a machine and network you alone control.",
    };

    /// <summary>Adds both options to <paramref name="command"/>.</summary>
    public void AddTo(Command command)
    {
        command.Options.Add(Credentials);
        command.Options.Add(Insecure);
    }

    /// <summary>
    /// Mutual TLS with the credential named by the option or the environment; else <see cref="RpcSecurity.Insecure"/> if
    /// asked for; else <paramref name="fallback"/>'s value, or null with <paramref name="error"/> saying what to give.
    /// </summary>
    public RpcSecurity? Resolve(ParseResult parse, string command, Func<RpcSecurity>? fallback, out string error)
    {
        error = "";
        try
        {
            if (ClusterCredentials.LoadFromOptionOrEnvironment(parse.GetValue(Credentials)) is { } credentials) return RpcSecurity.MutualTls(credentials);
        }
        catch (CredentialException e)
        {
            error = $"pmpi {command}: {e.Message}";
            return null;
        }
        if (parse.GetValue(Insecure)) return RpcSecurity.Insecure;
        if (fallback is not null) return fallback();
        error = $"pmpi {command}: no cluster credential: give --credentials DIR or set {ClusterCredentials.EnvironmentVariable} (`pmpi cluster init --dir DIR` makes one), "
            + (command is AgentCommand.Name or GatewayCommand.Name ? "or --insecure to run without one (cleartext, every caller accepted)." : "or --insecure for an agent that runs without one.");
        return null;
    }
}

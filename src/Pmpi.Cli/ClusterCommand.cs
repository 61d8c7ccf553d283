using System.CommandLine;
using Pmpi.Rpc.Security;

namespace Pmpi.Cli;

/// <summary>
/// `pmpi cluster init --dir D` creates a cluster's credential (CA, ticket key, this node's certificate);
/// `pmpi cluster issue NODE --dir D --out O` issues another node's from it. Exit 0, or 2 with the reason on stderr.
/// </summary>
internal static class ClusterCommand
{
    private const int FailedExitCode = 2;

    public static Command Create()
    {
        var names = new Option<string[]>("--name")
        {
            Description = "A host name or IP address other nodes reach this node by (repeat the option for more); localhost, 127.0.0.1, ::1 and the node's name are always included.",
        };
        var directory = new Option<string>("--dir") { Description = "The cluster's directory (created owner-only; holds the CA key).", Required = true };
        var init = new Command("init", "Create a cluster credential: a CA, the ticket-signing key and this node's certificate.") { directory, names };
        init.SetAction(parse => Run(() => ClusterCredentials.Initialize(parse.GetValue(directory)!, parse.GetValue(names) ?? []), "init"));

        var node = new Argument<string>("node") { Description = "The node's name (the certificate's subject and first SAN)." };
        var output = new Option<string>("--out") { Description = "Where to write the node's credential (created owner-only); copy it to the node.", Required = true };
        var issueNames = new Option<string[]>("--name") { Description = names.Description };
        var authority = new Option<string>("--dir") { Description = "The directory `pmpi cluster init` made (it holds the CA key).", Required = true };
        var issue = new Command("issue", "Issue a node's credential, signed by the cluster CA.") { node, authority, output, issueNames };
        issue.SetAction(parse => Run(() => ClusterCredentials.Issue(parse.GetValue(authority)!, parse.GetValue(output)!, parse.GetValue(node)!, parse.GetValue(issueNames) ?? []), "issue"));

        return new Command("cluster", "Create and issue cluster credentials.") { init, issue };
    }

    private static int Run(Func<ClusterCredentials> create, string verb)
    {
        try
        {
            var credentials = create();
            Console.WriteLine($"pmpi cluster {verb}: wrote {credentials.Directory} (CA {credentials.Authority.Subject}; node {credentials.Certificate.Subject}, valid until {credentials.Certificate.NotAfter:yyyy-MM-dd})");
            return 0;
        }
        catch (Exception e) when (e is CredentialException or IOException or UnauthorizedAccessException)
        {
            Console.Error.WriteLine($"pmpi cluster {verb}: {e.Message}");
            return FailedExitCode;
        }
    }
}

using System.Net.Security;
using Pmpi.Rpc.Security;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// The cluster credential the tests' agents, masters and clients share: made once with `pmpi cluster init`'s code in
/// a temporary directory, handed to every `pmpi` process through PMPI_CREDENTIALS, and deleted when the test process
/// exits, with the temporary directory those processes use (where a killed agent leaves its launches' key directories).
/// </summary>
internal static class TestCluster
{
    private static readonly Lazy<(string Root, ClusterCredentials Credentials)> Cluster = new(Create);
    private static readonly Lazy<RpcSecurity> MutualTls = new(() => RpcSecurity.MutualTls(Cluster.Value.Credentials));

    /// <summary>The credential directory (ca.crt, node.crt, node.key, cluster.key).</summary>
    public static string Directory => Cluster.Value.Credentials.Directory;

    /// <summary>The credential itself.</summary>
    public static ClusterCredentials Credentials => Cluster.Value.Credentials;

    /// <summary>The temporary directory (TMPDIR) of the `pmpi` processes the tests start.</summary>
    public static string TempDirectory => System.IO.Directory.CreateDirectory(Path.Combine(Cluster.Value.Root, "tmp")).FullName;

    /// <summary>Mutual TLS with the credential: how the tests call the agents.</summary>
    public static RpcSecurity Security => MutualTls.Value;

    /// <summary>
    /// TLS as a cluster member presents itself, for test clients that write raw HTTP/2 (the fuzzer): the member's
    /// certificate; the server's is not checked, since such a client only attacks.
    /// </summary>
    public static SslClientAuthenticationOptions ClientTls() => new()
    {
        ClientCertificates = [Credentials.Certificate],
        LocalCertificateSelectionCallback = (_, _, _, _, _) => Credentials.Certificate,
        RemoteCertificateValidationCallback = (_, _, _, _) => true,
    };

    private static (string, ClusterCredentials) Create()
    {
        var root = System.IO.Directory.CreateTempSubdirectory("pmpi-it-cluster-").FullName;
        AppDomain.CurrentDomain.ProcessExit += (_, _) =>
        {
            try
            {
                System.IO.Directory.Delete(root, recursive: true);
            }
            catch (IOException)
            {
                // Left in the temp directory; it holds only this test run's throwaway cluster.
            }
        };
        return (root, ClusterCredentials.Initialize(Path.Combine(root, "credentials"), []));
    }
}

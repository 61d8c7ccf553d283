using System.Security.Cryptography.X509Certificates;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Tests.Security;

/// <summary>The credential directory: what `pmpi cluster init` and `issue` write, and what loading refuses.</summary>
public sealed class ClusterCredentialsTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("pmpi-credentials-tests-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    [Fact]
    public void Initialize_NewDirectory_WritesOwnerOnlyFilesAndANodeCertificateSignedByTheCa()
    {
        var credentials = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), ["10.1.0.1", "node1.example"]);

        Assert.True(ClusterCredentials.ChainsTo(credentials.Certificate, credentials.Authority));
        Assert.True(credentials.Certificate.HasPrivateKey);
        var names = credentials.Certificate.Extensions.OfType<X509SubjectAlternativeNameExtension>().Single();
        Assert.Contains("node1.example", names.EnumerateDnsNames());
        Assert.Contains(System.Net.IPAddress.Parse("10.1.0.1"), names.EnumerateIPAddresses());
        Assert.Contains(System.Net.IPAddress.Loopback, names.EnumerateIPAddresses());
        if (OperatingSystem.IsWindows()) return;
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(credentials.Directory));
        foreach (var file in Directory.EnumerateFiles(credentials.Directory))
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(file));
    }

    [Fact]
    public void Issue_FromTheClusterDirectory_SameCaAndKeyButNoCaKey()
    {
        var cluster = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);

        var node = ClusterCredentials.Issue(cluster.Directory, Path.Combine(_root, "node2"), "node2", ["10.1.0.2"]);

        Assert.Equal(cluster.Authority.Thumbprint, node.Authority.Thumbprint);
        Assert.True(ClusterCredentials.ChainsTo(node.Certificate, cluster.Authority));
        Assert.Equal("CN=node2", node.Certificate.Subject);
        Assert.True(node.ClusterKey.SequenceEqual(cluster.ClusterKey));
        Assert.False(File.Exists(Path.Combine(node.Directory, ClusterCredentials.AuthorityKeyFile)));
    }

    [Fact]
    public void Initialize_DirectoryWithACredential_RefusesToOverwrite()
    {
        var directory = Path.Combine(_root, "cluster");
        ClusterCredentials.Initialize(directory, []);

        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Initialize(directory, []));

        Assert.Contains("already holds a credential", error.Message);
    }

    [Fact]
    public void Load_KeyReadableByOthers_RefusedNamingTheFile()
    {
        if (OperatingSystem.IsWindows()) return;
        var credentials = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);
        var key = Path.Combine(credentials.Directory, ClusterCredentials.ClusterKeyFile);
        File.SetUnixFileMode(key, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead);

        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(credentials.Directory));

        Assert.Contains(key, error.Message);
        Assert.Contains("chmod 600", error.Message);
    }

    [Fact]
    public void Load_NodeCertificateOfAnotherCa_Refused()
    {
        var ours = ClusterCredentials.Initialize(Path.Combine(_root, "ours"), []);
        var theirs = ClusterCredentials.Initialize(Path.Combine(_root, "theirs"), []);
        File.Copy(Path.Combine(theirs.Directory, ClusterCredentials.AuthorityFile), Path.Combine(ours.Directory, ClusterCredentials.AuthorityFile), overwrite: true);

        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(ours.Directory));

        Assert.Contains("is not signed by the cluster CA", error.Message);
    }

    [Fact]
    public void Load_MissingDirectory_SaysHowToMakeOne()
    {
        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(Path.Combine(_root, "nowhere")));

        Assert.Contains("pmpi cluster init", error.Message);
    }
}

using System.Security.Cryptography.X509Certificates;
using Pmpi.Rpc.Security;

namespace Pmpi.Rpc.Tests.Security;

/// <summary>The credential directory: what `pmpi cluster init` and `issue` write, and what loading refuses.</summary>
public sealed class ClusterCredentialsTests : IDisposable
{
    /// <summary>The uid of the user nobody on Debian: an owner other than the test's.</summary>
    private const int Nobody = 65534;

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
    public void Load_DirectoryWritableByOthers_RefusedNamingItAndItsMode()
    {
        if (OperatingSystem.IsWindows()) return;
        var credentials = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);
        File.SetUnixFileMode(credentials.Directory, (UnixFileMode)0b111_111_111);

        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(credentials.Directory));

        Assert.Contains($"{credentials.Directory} is writable by users other than its owner (mode 0777)", error.Message);
        Assert.Contains("chmod go-w", error.Message);
    }

    [Fact]
    public void Load_AuthorityCertificateWritableByOthers_RefusedNamingItAndItsMode()
    {
        if (OperatingSystem.IsWindows()) return;
        var credentials = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);
        var authority = Path.Combine(credentials.Directory, ClusterCredentials.AuthorityFile);
        File.SetUnixFileMode(authority, (UnixFileMode)0b110_110_110);

        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(credentials.Directory));

        Assert.Contains($"{authority} is writable by users other than its owner (mode 0666); make it 0644 or stricter", error.Message);
    }

    [Fact]
    public void Load_GroupWritableCertificate_Refused()
    {
        if (OperatingSystem.IsWindows()) return;
        var credentials = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);
        var certificate = Path.Combine(credentials.Directory, ClusterCredentials.CertificateFile);
        File.SetUnixFileMode(certificate, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupWrite);

        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(credentials.Directory));

        Assert.Contains($"{certificate} is writable by users other than its owner (mode 0620)", error.Message);
    }

    [AsRootOnLinuxFact]
    public void Load_KeyOwnedByAnotherUser_RefusedNamingItAndItsOwner()
    {
        // Arrange: root (as the agent might run) and a key that the user nobody owns, and so could replace.
        var credentials = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);
        var key = Path.Combine(credentials.Directory, ClusterCredentials.CertificateKeyFile);
        Chown(key, Nobody);

        // Act
        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(credentials.Directory));

        // Assert
        Assert.Contains($"{key} is owned by uid {Nobody}, not by this process's user (uid 0) or root", error.Message);
    }

    [AsRootOnLinuxFact]
    public void Load_DirectoryOwnedByAnotherUser_Refused()
    {
        var credentials = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);
        Chown(credentials.Directory, Nobody);

        var error = Assert.Throws<CredentialException>(() => ClusterCredentials.Load(credentials.Directory));

        Assert.Contains($"{credentials.Directory} is owned by uid {Nobody}", error.Message);
    }

    [Fact]
    public void Load_WhatInitializeAndIssueWrote_Accepted()
    {
        var cluster = ClusterCredentials.Initialize(Path.Combine(_root, "cluster"), []);
        ClusterCredentials.Issue(cluster.Directory, Path.Combine(_root, "node2"), "node2", []);

        var reloaded = ClusterCredentials.Load(cluster.Directory);
        var node = ClusterCredentials.Load(Path.Combine(_root, "node2"));

        Assert.Equal(cluster.Authority.Thumbprint, reloaded.Authority.Thumbprint);
        Assert.Equal("CN=node2", node.Certificate.Subject);
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

    private static void Chown(string path, int uid)
    {
        using var chown = System.Diagnostics.Process.Start("chown", [$"{uid}", path]);
        Assert.True(chown.WaitForExit(TimeSpan.FromSeconds(30)), $"chown {uid} {path} did not finish");
        Assert.Equal(0, chown.ExitCode);
    }

    /// <summary>A fact that needs root on Linux, to give a file another owner; elsewhere it shows as skipped, saying why.</summary>
    private sealed class AsRootOnLinuxFactAttribute : FactAttribute
    {
        public AsRootOnLinuxFactAttribute()
        {
            if (!OperatingSystem.IsLinux()) Skip = "Linux only: file owners are checked on Linux.";
            else if (!Environment.IsPrivilegedProcess) Skip = "Needs root, to give a credential file another owner.";
        }
    }
}

using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Pmpi.Rpc.Security.Internal;

namespace Pmpi.Rpc.Security;

/// <summary>
/// A cluster's credential, as one directory: the cluster CA's certificate (ca.crt), this node's certificate and key
/// signed by it (node.crt, node.key; ECDSA P-256, valid as TLS server and client) and the key that signs job tickets
/// (cluster.key, 32 random bytes). The directory made by <see cref="Initialize"/> also holds the CA's key (ca.key),
/// which only <see cref="Issue"/> needs. Files are owner-only (0600 in a 0700 directory on Unix). Loading refuses,
/// on Unix, a directory or file that users other than its owner can write, a key file they can read, and (on Linux)
/// a directory or file owned by a user other than this process's or root: whoever can change a credential decides
/// whom this process trusts and what it runs.
/// </summary>
public sealed class ClusterCredentials
{
    /// <summary>The environment variable naming the credential directory (a path, never the secret itself).</summary>
    public const string EnvironmentVariable = "PMPI_CREDENTIALS";

    /// <summary>The CA certificate's file name.</summary>
    public const string AuthorityFile = "ca.crt";

    /// <summary>The CA private key's file name (only where the cluster was initialised).</summary>
    public const string AuthorityKeyFile = "ca.key";

    /// <summary>The node certificate's file name.</summary>
    public const string CertificateFile = "node.crt";

    /// <summary>The node private key's file name.</summary>
    public const string CertificateKeyFile = "node.key";

    /// <summary>The ticket-signing key's file name.</summary>
    public const string ClusterKeyFile = "cluster.key";

    private const int ClusterKeyLength = 32;
    private static readonly TimeSpan AuthorityLifetime = TimeSpan.FromDays(3650);
    private static readonly TimeSpan NodeLifetime = TimeSpan.FromDays(825);
    private const UnixFileMode OwnerOnlyFile = UnixFileMode.UserRead | UnixFileMode.UserWrite;
    private const UnixFileMode OwnerOnlyDirectory = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;

    private readonly byte[] _clusterKey;

    private ClusterCredentials(string directory, X509Certificate2 authority, X509Certificate2 certificate, byte[] clusterKey)
    {
        Directory = directory;
        Authority = authority;
        Certificate = certificate;
        _clusterKey = clusterKey;
    }

    /// <summary>The directory the credential was loaded from.</summary>
    public string Directory { get; }

    /// <summary>The cluster CA's certificate: the one root every peer's certificate must chain to.</summary>
    public X509Certificate2 Authority { get; }

    /// <summary>This node's certificate, with its private key: presented as TLS server and as TLS client.</summary>
    public X509Certificate2 Certificate { get; }

    /// <summary>The key that signs job tickets and from which job keys derive.</summary>
    internal ReadOnlySpan<byte> ClusterKey => _clusterKey;

    /// <summary>
    /// The directory named by <paramref name="directory"/>, else by <see cref="EnvironmentVariable"/>; null when neither names one.
    /// </summary>
    /// <exception cref="CredentialException">The directory is missing, incomplete, malformed, or exposed to other users.</exception>
    public static ClusterCredentials? LoadFromOptionOrEnvironment(string? directory)
    {
        var path = string.IsNullOrEmpty(directory) ? System.Environment.GetEnvironmentVariable(EnvironmentVariable) : directory;
        return string.IsNullOrEmpty(path) ? null : Load(path);
    }

    /// <summary>Loads the credential in <paramref name="directory"/>.</summary>
    /// <exception cref="CredentialException">
    /// The directory or a file is missing or malformed, or another user could read a key or change what is loaded; the
    /// message names the file.
    /// </exception>
    public static ClusterCredentials Load(string directory)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        directory = Path.GetFullPath(directory);
        if (!System.IO.Directory.Exists(directory))
            throw new CredentialException($"The credential directory '{directory}' does not exist: create one with `pmpi cluster init --dir {directory}`.");
        CheckNoOtherWriter(directory);
        var authority = ReadCertificate(directory, AuthorityFile, keyFile: null);
        var certificate = ReadCertificate(directory, CertificateFile, CertificateKeyFile);
        var clusterKey = ReadSecret(directory, ClusterKeyFile);
        if (clusterKey.Length != ClusterKeyLength)
            throw new CredentialException($"{Path.Combine(directory, ClusterKeyFile)} holds {clusterKey.Length} bytes; a cluster key is {ClusterKeyLength}.");
        if (!ChainsTo(certificate, authority))
            throw new CredentialException($"{Path.Combine(directory, CertificateFile)} is not signed by the cluster CA in {Path.Combine(directory, AuthorityFile)}, or has expired.");
        return new ClusterCredentials(directory, authority, certificate, clusterKey);
    }

    /// <summary>
    /// Creates a cluster in <paramref name="directory"/> (which must not hold one already): a CA, a ticket-signing
    /// key, and a certificate for this node naming <paramref name="names"/> as well as this machine's name,
    /// localhost, 127.0.0.1 and ::1.
    /// </summary>
    /// <param name="directory">Where to write; created owner-only.</param>
    /// <param name="names">Host names and IP addresses other nodes reach this one by.</param>
    /// <exception cref="CredentialException">The directory already holds a credential.</exception>
    public static ClusterCredentials Initialize(string directory, IEnumerable<string> names)
    {
        ArgumentException.ThrowIfNullOrEmpty(directory);
        ArgumentNullException.ThrowIfNull(names);
        directory = Path.GetFullPath(directory);
        CreateOwnerOnlyDirectory(directory);
        using var authorityKey = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN=PMPI cluster CA {Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(4))}", authorityKey, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: true, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        var now = DateTimeOffset.UtcNow;
        using var authority = request.CreateSelfSigned(now.AddMinutes(-5), now + AuthorityLifetime);
        WriteNew(directory, AuthorityFile, authority.ExportCertificatePem());
        WriteNew(directory, AuthorityKeyFile, authorityKey.ExportPkcs8PrivateKeyPem());
        WriteNew(directory, ClusterKeyFile, Convert.ToBase64String(RandomNumberGenerator.GetBytes(ClusterKeyLength)));
        WriteNodeCertificate(directory, authority, authorityKey, System.Environment.MachineName, names);
        return Load(directory);
    }

    /// <summary>
    /// Issues a node's credential: <paramref name="outputDirectory"/> gets the CA's certificate, the cluster key and
    /// a new certificate for <paramref name="nodeName"/> naming <paramref name="names"/> (and the node name), signed
    /// with the CA key in <paramref name="authorityDirectory"/>. The CA's key is not copied.
    /// </summary>
    /// <exception cref="CredentialException">The authority directory lacks the CA key, or the output directory already holds a credential.</exception>
    public static ClusterCredentials Issue(string authorityDirectory, string outputDirectory, string nodeName, IEnumerable<string> names)
    {
        ArgumentException.ThrowIfNullOrEmpty(authorityDirectory);
        ArgumentException.ThrowIfNullOrEmpty(outputDirectory);
        ArgumentException.ThrowIfNullOrEmpty(nodeName);
        ArgumentNullException.ThrowIfNull(names);
        authorityDirectory = Path.GetFullPath(authorityDirectory);
        outputDirectory = Path.GetFullPath(outputDirectory);
        if (!File.Exists(Path.Combine(authorityDirectory, AuthorityKeyFile)))
            throw new CredentialException($"{Path.Combine(authorityDirectory, AuthorityKeyFile)} does not exist: issue node credentials from the directory `pmpi cluster init` made.");
        CheckNoOtherWriter(authorityDirectory);
        using var authorityWithKey = ReadCertificate(authorityDirectory, AuthorityFile, AuthorityKeyFile);
        using var authorityKey = authorityWithKey.GetECDsaPrivateKey()
            ?? throw new CredentialException($"{Path.Combine(authorityDirectory, AuthorityKeyFile)} is not an ECDSA key.");
        var clusterKey = ReadSecret(authorityDirectory, ClusterKeyFile);
        CreateOwnerOnlyDirectory(outputDirectory);
        WriteNew(outputDirectory, AuthorityFile, authorityWithKey.ExportCertificatePem());
        WriteNew(outputDirectory, ClusterKeyFile, Convert.ToBase64String(clusterKey));
        WriteNodeCertificate(outputDirectory, authorityWithKey, authorityKey, nodeName, names);
        return Load(outputDirectory);
    }

    /// <summary>Whether <paramref name="certificate"/> chains to <paramref name="authority"/> alone, now.</summary>
    internal static bool ChainsTo(X509Certificate2 certificate, X509Certificate2 authority)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        // The cluster has no revocation list: a compromised cluster is re-initialised (docs/security.md).
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.VerificationFlags = X509VerificationFlags.NoFlag;
        return chain.Build(certificate) && chain.ChainElements[^1].Certificate.RawDataMemory.Span.SequenceEqual(authority.RawDataMemory.Span);
    }

    private static void WriteNodeCertificate(string directory, X509Certificate2 authority, ECDsa authorityKey, string nodeName, IEnumerable<string> names)
    {
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var request = new CertificateRequest($"CN={nodeName}", key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: false, hasPathLengthConstraint: false, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(
            [new Oid("1.3.6.1.5.5.7.3.1", "Server Authentication"), new Oid("1.3.6.1.5.5.7.3.2", "Client Authentication")], critical: false));
        var alternativeNames = new SubjectAlternativeNameBuilder();
        foreach (var name in new[] { nodeName, "localhost", "127.0.0.1", "::1" }.Concat(names).Distinct(StringComparer.OrdinalIgnoreCase))
        {
            if (IPAddress.TryParse(name, out var address)) alternativeNames.AddIpAddress(address);
            else alternativeNames.AddDnsName(name);
        }
        request.CertificateExtensions.Add(alternativeNames.Build());
        var now = DateTimeOffset.UtcNow;
        var notAfter = now + NodeLifetime < authority.NotAfter ? now + NodeLifetime : authority.NotAfter;
        using var certificate = request.Create(authority.SubjectName, X509SignatureGenerator.CreateForECDsa(authorityKey), now.AddMinutes(-5), notAfter,
            RandomNumberGenerator.GetBytes(16));
        WriteNew(directory, CertificateFile, certificate.ExportCertificatePem());
        WriteNew(directory, CertificateKeyFile, key.ExportPkcs8PrivateKeyPem());
    }

    private static X509Certificate2 ReadCertificate(string directory, string file, string? keyFile)
    {
        var path = Path.Combine(directory, file);
        if (!File.Exists(path)) throw new CredentialException($"{path} is missing: the credential directory is incomplete.");
        CheckNoOtherWriter(path);
        try
        {
            if (keyFile is null) return X509CertificateLoader.LoadCertificateFromFile(path);
            var keyPath = Path.Combine(directory, keyFile);
            if (!File.Exists(keyPath)) throw new CredentialException($"{keyPath} is missing: the credential directory is incomplete.");
            CheckOwnerOnly(keyPath);
            using var ephemeral = X509Certificate2.CreateFromPemFile(path, keyPath);
            // Windows' TLS stack cannot use a key that lives only in memory; a PKCS#12 round trip gives it one it can.
            return OperatingSystem.IsWindows() ? X509CertificateLoader.LoadPkcs12(ephemeral.Export(X509ContentType.Pkcs12), password: null) : new X509Certificate2(ephemeral);
        }
        catch (CryptographicException e)
        {
            throw new CredentialException($"{path}{(keyFile is null ? "" : $" or {Path.Combine(directory, keyFile)}")} is not a PEM certificate and key: {e.Message}", e);
        }
    }

    private static byte[] ReadSecret(string directory, string file)
    {
        var path = Path.Combine(directory, file);
        if (!File.Exists(path)) throw new CredentialException($"{path} is missing: the credential directory is incomplete.");
        CheckOwnerOnly(path);
        try
        {
            return Convert.FromBase64String(File.ReadAllText(path).Trim());
        }
        catch (FormatException e)
        {
            throw new CredentialException($"{path} is not base64.", e);
        }
    }

    /// <summary>Refuses a key file that users other than its owner can read or write, or that another user owns.</summary>
    private static void CheckOwnerOnly(string path)
    {
        CheckNoOtherWriter(path);
        if (OperatingSystem.IsWindows()) return;
        var mode = File.GetUnixFileMode(path);
        if ((mode & ~(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute)) != 0)
            throw new CredentialException($"{path} is readable by other users (mode {Octal(mode)}); make it owner-only: chmod 600 {path}.");
    }

    /// <summary>
    /// Refuses a directory or file that users other than its owner can write, or (on Linux) that is owned by a user
    /// other than this process's or root: either could replace what this process trusts (the CA, its key, the
    /// cluster key), and a process run as root would then serve, and run programs for, whoever did. Windows keeps
    /// this in ACLs, which the credential's installers set (deploy/windows).
    /// </summary>
    private static void CheckNoOtherWriter(string path)
    {
        if (OperatingSystem.IsWindows()) return;
        UnixFileMode mode;
        uint? owner;
        try
        {
            (mode, owner) = UnixFileStatus.Of(path);
        }
        catch (IOException e)
        {
            throw new CredentialException(e.Message, e);
        }
        if ((mode & (UnixFileMode.GroupWrite | UnixFileMode.OtherWrite)) != 0)
            throw new CredentialException($"{path} is writable by users other than its owner (mode {Octal(mode)}); make it {Octal(mode & ~(UnixFileMode.GroupWrite | UnixFileMode.OtherWrite))} or stricter: chmod go-w {path}.");
        uint self = UnixFileStatus.ProcessUser;
        if (owner is { } uid && uid != self && uid != 0)
            throw new CredentialException($"{path} is owned by uid {uid}, not by this process's user (uid {self}) or root, so that user could change it; "
                + $"use a credential of this user's own, or chown {self} {path}.");
    }

    private static string Octal(UnixFileMode mode) => Convert.ToString((int)mode, 8).PadLeft(4, '0');

    private static void CreateOwnerOnlyDirectory(string directory)
    {
        if (File.Exists(Path.Combine(directory, ClusterKeyFile)) || File.Exists(Path.Combine(directory, CertificateKeyFile)))
            throw new CredentialException($"{directory} already holds a credential; remove it first or choose another directory.");
        if (OperatingSystem.IsWindows()) System.IO.Directory.CreateDirectory(directory);
        else
        {
            System.IO.Directory.CreateDirectory(directory, OwnerOnlyDirectory);
            File.SetUnixFileMode(directory, OwnerOnlyDirectory);
        }
    }

    private static void WriteNew(string directory, string file, string text)
    {
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows()) options.UnixCreateMode = OwnerOnlyFile;
        using var writer = new StreamWriter(Path.Combine(directory, file), System.Text.Encoding.ASCII, options);
        writer.Write(text);
        writer.Write('\n');
    }
}

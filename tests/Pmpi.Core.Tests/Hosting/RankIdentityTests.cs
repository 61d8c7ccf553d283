using Google.Protobuf;
using Pmpi.Hosting;
using Pmpi.Rpc;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.V1;

namespace Pmpi.Tests.Hosting;

/// <summary>A launched rank learns who it is from the environment, and its job key from a file it reads once and deletes.</summary>
public sealed class RankIdentityTests : IDisposable
{
    private readonly DirectoryInfo _directory = Directory.CreateTempSubdirectory("pmpi-identity-tests-");

    public void Dispose() => _directory.Delete(recursive: true);

    [Fact]
    public void FromEnvironment_KeyFile_ReadsTheTokenAndDeletesTheFile()
    {
        var file = KeyFile(new RankCredentials { JobToken = "the-job-key" });

        var identity = RankIdentity.FromEnvironment(Environment(file, master: "http://127.0.0.1:7300"))!;

        Assert.Equal("the-job-key", identity.JobToken);
        Assert.False(File.Exists(file), "the rank left its key file behind");
        Assert.Same(RpcSecurity.Insecure, identity.MasterSecurity);
        Assert.False(identity.EncryptStreams);
    }

    [Fact]
    public void FromEnvironment_TlsMasterAndAnAddressBeyondLoopback_TrustsTheCaAndEncryptsStreams()
    {
        var cluster = ClusterCredentials.Initialize(Path.Combine(_directory.FullName, "cluster"), []);
        var file = KeyFile(new RankCredentials { JobToken = "k", Authority = ByteString.CopyFrom(cluster.Authority.RawData) });

        var identity = RankIdentity.FromEnvironment(Environment(file, master: "https://10.1.0.1:7300", bind: "10.1.0.2"))!;

        Assert.True(identity.MasterSecurity.UsesTls);
        Assert.True(identity.EncryptStreams);
    }

    [Fact]
    public void FromEnvironment_TlsMasterWithoutACa_FailsNamingTheVariable()
    {
        var file = KeyFile(new RankCredentials { JobToken = "k" });

        var error = Assert.Throws<MpiException>(() => RankIdentity.FromEnvironment(Environment(file, master: "https://10.1.0.1:7300")));

        Assert.Contains(RankEnvironment.CredentialsFile, error.Message);
    }

    [Theory]
    [InlineData("tcp://127.0.0.1:7300")]
    [InlineData("127.0.0.1:7300")]
    public void FromEnvironment_MasterNotHttp_FailsNamingTheVariable(string master)
    {
        var file = KeyFile(new RankCredentials { JobToken = "k" });

        var error = Assert.Throws<MpiException>(() => RankIdentity.FromEnvironment(Environment(file, master)));

        Assert.Contains($"{RankEnvironment.Master}='{master}'", error.Message);
    }

    [Fact]
    public void MasterUri_NoAddressAfterTheScheme_FailsNamingTheVariable()
    {
        // Only the scheme is checked at start (a node-local rank may never dial its master); the rest, where it is dialed.
        var identity = RankIdentity.FromEnvironment(Environment(KeyFile(new RankCredentials { JobToken = "k" }), master: "http://[::1"))!;

        var error = Assert.Throws<MpiException>(() => identity.MasterUri);

        Assert.Contains($"{RankEnvironment.Master}='http://[::1'", error.Message);
    }

    [Fact]
    public void FromEnvironment_KeyFileGone_FailsNamingTheFile()
    {
        var missing = Path.Combine(_directory.FullName, "rank-0");

        var error = Assert.Throws<MpiException>(() => RankIdentity.FromEnvironment(Environment(missing, master: "http://127.0.0.1:7300")));

        Assert.Contains(missing, error.Message);
        Assert.Equal(ErrorClass.InvalidArgument, error.ErrorClass);
    }

    [Fact]
    public void FromEnvironment_TableInTheKeyFile_IsTheRanksTableWithoutRegistering()
    {
        var table = new RankTable { Ranks = { new RankEntry { Rank = 0, Node = "n" }, new RankEntry { Rank = 1, Node = "n" } } };
        var file = KeyFile(new RankCredentials { JobToken = "k", Table = table });
        var variables = Environment(file, master: "http://127.0.0.1:7300");

        var identity = RankIdentity.FromEnvironment(name => name == RankEnvironment.Heartbeat ? "7" : variables(name))!;

        Assert.Equal(table, identity.Table);
    }

    [Fact]
    public void FromEnvironment_TableWithoutAHeartbeatPipe_FailsNamingTheVariable()
    {
        var file = KeyFile(new RankCredentials { JobToken = "k", Table = new RankTable() });

        var error = Assert.Throws<MpiException>(() => RankIdentity.FromEnvironment(Environment(file, master: "http://127.0.0.1:7300")));

        Assert.Contains(RankEnvironment.Heartbeat, error.Message);
        Assert.Contains("joined", error.Message);
    }

    [Fact]
    public void FromEnvironment_PlaceOnItsNode_ReadsTheThreeVariables()
    {
        var variables = Environment(KeyFile(new RankCredentials { JobToken = "k" }), master: "http://127.0.0.1:7300");
        var place = new Dictionary<string, string> { [RankEnvironment.LocalRank] = "1", [RankEnvironment.LocalSize] = "2", [RankEnvironment.NodeRank] = "3" };

        var identity = RankIdentity.FromEnvironment(name => place.GetValueOrDefault(name) ?? variables(name))!;

        Assert.Equal(new NodePlace(LocalRank: 1, LocalSize: 2, NodeRank: 3), identity.Place);
    }

    [Theory]
    [InlineData("1", true)]
    [InlineData(null, false)]
    public void FromEnvironment_ReportBindingsVariable_SaysWhetherToReport(string? value, bool expected)
    {
        var variables = Environment(KeyFile(new RankCredentials { JobToken = "k" }), master: "http://127.0.0.1:7300");

        var identity = RankIdentity.FromEnvironment(name => name == RankEnvironment.ReportBindings ? value : variables(name))!;

        Assert.Equal(expected, identity.ReportBindings);
    }

    [Fact]
    public void FromEnvironment_NoPlaceVariables_HasNoPlace()
    {
        var identity = RankIdentity.FromEnvironment(Environment(KeyFile(new RankCredentials { JobToken = "k" }), master: "http://127.0.0.1:7300"))!;

        Assert.Null(identity.Place);
    }

    [Theory]
    [InlineData("2", "2", "0", RankEnvironment.LocalRank)]
    [InlineData("0", "0", "0", RankEnvironment.LocalSize)]
    [InlineData("0", "1", "-1", RankEnvironment.NodeRank)]
    [InlineData("0", null, "0", RankEnvironment.LocalSize)]
    public void FromEnvironment_PlaceOutOfRangeOrPartial_FailsNamingTheVariable(string? localRank, string? localSize, string? nodeRank, string blamed)
    {
        var variables = Environment(KeyFile(new RankCredentials { JobToken = "k" }), master: "http://127.0.0.1:7300");
        var place = new Dictionary<string, string?> { [RankEnvironment.LocalRank] = localRank, [RankEnvironment.LocalSize] = localSize, [RankEnvironment.NodeRank] = nodeRank };

        var error = Assert.Throws<MpiException>(() => RankIdentity.FromEnvironment(name => place.TryGetValue(name, out var value) ? value : variables(name)));

        Assert.Contains($"{blamed}=", error.Message);
    }

    [Theory]
    [InlineData("10", 10.0)]
    [InlineData(null, null)]
    public void FromEnvironment_HeartbeatTimeoutVariable_IsHowLongTheAgentMayLeaveBeatsUnread(string? value, double? seconds)
    {
        var variables = Environment(KeyFile(new RankCredentials { JobToken = "k" }), master: "http://127.0.0.1:7300");

        var identity = RankIdentity.FromEnvironment(name => name == RankEnvironment.HeartbeatTimeout ? value : variables(name))!;

        Assert.Equal(seconds, identity.HeartbeatTimeout?.TotalSeconds);
    }

    [Theory]
    [InlineData("0")]
    [InlineData("ten")]
    public void FromEnvironment_HeartbeatTimeoutNotAPositiveNumber_FailsNamingTheVariable(string value)
    {
        var variables = Environment(KeyFile(new RankCredentials { JobToken = "k" }), master: "http://127.0.0.1:7300");

        var error = Assert.Throws<MpiException>(() => RankIdentity.FromEnvironment(name => name == RankEnvironment.HeartbeatTimeout ? value : variables(name)));

        Assert.Contains($"{RankEnvironment.HeartbeatTimeout}='{value}'", error.Message);
    }

    private string KeyFile(RankCredentials credentials)
    {
        var path = Path.Combine(_directory.FullName, "rank-0");
        File.WriteAllBytes(path, credentials.ToByteArray());
        return path;
    }

    private static Func<string, string?> Environment(string keyFile, string master, string bind = "127.0.0.1")
    {
        var variables = new Dictionary<string, string>
        {
            [RankEnvironment.JobId] = "job",
            [RankEnvironment.Rank] = "0",
            [RankEnvironment.Size] = "2",
            [RankEnvironment.Master] = master,
            [RankEnvironment.CredentialsFile] = keyFile,
            [RankEnvironment.BindAddress] = bind,
        };
        return name => variables.GetValueOrDefault(name);
    }
}

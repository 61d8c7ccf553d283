using System.Text;
using Pmpi.Hosting.Pmi;
using static Pmpi.Hosting.Pmi.PmiCommand;

namespace Pmpi.Tests.Hosting.Pmi;

/// <summary>The two PMI wire forms, as MPICH's client writes them and Hydra's and Slurm's servers answer.</summary>
public sealed class PmiCommandTests
{
    [Fact]
    public void ToLine_Put_IsMpichsPmi1Line()
    {
        var put = new PmiCommand("put", Attribute("kvsname", "kvs_42_0"), Attribute("key", "pmpi-node-3"), Attribute("value", "node1"));

        Assert.Equal("cmd=put kvsname=kvs_42_0 key=pmpi-node-3 value=node1\n", put.ToLine());
    }

    [Fact]
    public void ToFrame_KvsPut_IsBlankPaddedLengthThenBody()
    {
        var put = new PmiCommand("kvs-put", Attribute("key", "k"), Attribute("value", "v=w"));

        Assert.Equal("    28cmd=kvs-put;key=k;value=v=w;", Encoding.ASCII.GetString(put.ToFrame()));
    }

    [Fact]
    public void ToLine_ValueWithASpace_IsRefused()
    {
        var put = new PmiCommand("put", Attribute("value", "a b"));

        var error = Assert.Throws<ArgumentException>(put.ToLine);
        Assert.Contains("'value'", error.Message);
    }

    [Fact]
    public void ToFrame_ValueWithASemicolon_IsRefused()
    {
        var put = new PmiCommand("kvs-put", Attribute("value", "a;b"));

        var error = Assert.Throws<ArgumentException>(put.ToFrame);
        Assert.Contains("semicolon", error.Message);
    }

    [Fact]
    public void ParseLine_HydraGetResult_ReadsValueWithEqualsSigns()
    {
        var result = ParseLine("cmd=get_result rc=0 msg=success value=http://127.0.0.1:4000/|AB=");

        Assert.Equal("get_result", result.Name);
        Assert.True(result.Succeeded);
        Assert.Equal("http://127.0.0.1:4000/|AB=", result["value"]);
    }

    [Fact]
    public void ParseLine_HydraMissingKey_IsAFailureWithItsReason()
    {
        var result = ParseLine("cmd=get_result rc=-1 msg=key_pmpi-job_not_found value=unknown");

        Assert.False(result.Succeeded);
        Assert.Equal("key_pmpi-job_not_found", result.Reason);
    }

    [Theory]
    [InlineData("    52")] // MPICH and Hydra: "%6u"
    [InlineData("52    ")] // Slurm: "%-6d"
    [InlineData("000052")]
    public void ParseLength_EitherPadding_ReadsTheLength(string prefix)
    {
        Assert.Equal(52, ParseLength(Encoding.ASCII.GetBytes(prefix)));
    }

    [Fact]
    public void ParseLength_NotDigits_FailsNamingWhatCame()
    {
        var error = Assert.Throws<MpiException>(() => ParseLength("cmd=in"u8));

        Assert.Equal(ErrorClass.Transport, error.ErrorClass);
        Assert.Contains("'cmd=in'", error.Message);
    }

    [Fact]
    public void ParseBody_SlurmFullinitResponse_ReadsRankAndSize()
    {
        var response = ParseBody("cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=3;size=4;appnum=-1;debugged=FALSE;pmiverbose=FALSE;");

        Assert.Equal("fullinit-response", response.Name);
        Assert.True(response.Succeeded);
        Assert.Equal(3, response.Integer("rank"));
        Assert.Equal(4, response.Integer("size"));
        Assert.Equal(-1, response.Integer("appnum"));
    }

    [Fact]
    public void Integer_Missing_FailsNamingTheCommand()
    {
        var error = Assert.Throws<MpiException>(() => ParseBody("cmd=fullinit-response;rc=0;").Integer("rank"));

        Assert.Contains("'fullinit-response'", error.Message);
        Assert.Contains("'rank'", error.Message);
    }

    [Theory]
    [InlineData("put_result rc=0")]
    [InlineData("cmd= rc=0")]
    [InlineData("")]
    public void ParseLine_NotACommand_FailsQuotingIt(string line)
    {
        var error = Assert.Throws<MpiException>(() => ParseLine(line));

        Assert.Contains($"'{line}'", error.Message);
    }

    [Fact]
    public void ToFrame_ThenParse_RoundTrips()
    {
        var command = new PmiCommand("kvs-get", Attribute("jobid", "12.0"), Attribute("srcid", -1), Attribute("key", "pmpi-endpoint-7"));
        var frame = command.ToFrame();

        var read = ParseBody(Encoding.UTF8.GetString(frame, 6, ParseLength(frame.AsSpan(0, 6))));

        Assert.Equal(command.ToString(), read.ToString());
    }
}

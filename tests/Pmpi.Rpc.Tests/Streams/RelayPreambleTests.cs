using Grpc.Core;
using Pmpi.Rpc.Security;
using Pmpi.Rpc.Streams;

namespace Pmpi.Rpc.Tests.Streams;

public sealed class RelayPreambleTests
{
    [Fact]
    public void TryRead_WhatToBytesWrote_SameRouteAndProofThatMatches()
    {
        var written = RelayPreamble.For("job key", "job-é1", 3, 70000);

        Assert.True(RelayPreamble.TryRead(written.ToBytes(), out var read, out int needed, out var malformed), malformed);

        Assert.Equal(written, read);
        Assert.Equal(written.ToBytes().Length, needed);
        Assert.True(RouteProof.Matches("job key", read.JobId, read.Source, read.Destination, read.Proof));
    }

    [Fact]
    public void TryRead_EveryPrefix_AsksForMoreWithoutAReason()
    {
        var bytes = RelayPreamble.For("key", "job", 0, 1).ToBytes();

        for (int length = 0; length < bytes.Length; length++)
        {
            Assert.False(RelayPreamble.TryRead(bytes.AsSpan(0, length), out _, out int needed, out var malformed));
            Assert.Equal("", malformed);
            Assert.True(needed > length);
        }
    }

    [Theory]
    [InlineData("16030100")] // a TLS handshake record
    [InlineData("50524920")] // HTTP/2's preface, "PRI "
    [InlineData("504D5049524C5931FFFF")] // a body longer than any preamble's
    [InlineData("504D5049524C5931000B0041414141414141414141")] // an empty job id
    [InlineData("504D5049524C5931000E016AFFFFFFFF0000000104414141")] // a negative source rank
    [InlineData("504D5049524C5931000E016A000000000000000104414141")] // a proof that runs past the body
    [InlineData("504D5049524C5931000D02C32800000000000000010141")] // a job id that is not UTF-8
    public void TryRead_NotAPreamble_SaysWhy(string hex)
    {
        Assert.False(RelayPreamble.TryRead(Convert.FromHexString(hex), out _, out _, out var malformed));

        Assert.NotEqual("", malformed);
    }

    [Fact]
    public void RelayReply_RefusalRoundTrips_AndOkIsThreeBytes()
    {
        var refusal = RelayReply.Refusal(StatusCode.PermissionDenied, "no such job");

        Assert.True(RelayReply.TryRead(refusal, out var code, out var reason, out _));
        Assert.Equal((StatusCode.PermissionDenied, "no such job"), (code, reason));
        Assert.True(RelayReply.TryRead(RelayReply.Ok, out code, out reason, out int needed));
        Assert.Equal((StatusCode.OK, "", 3), (code, reason, needed));
    }

    [Fact]
    public void RelayReply_NotAGatewaysReply_Unavailable()
    {
        var error = Assert.Throws<RpcException>(() => RelayReply.TryRead("HTTP/1.1 400"u8, out _, out _, out _));

        Assert.Equal(StatusCode.Unavailable, error.StatusCode);
    }
}

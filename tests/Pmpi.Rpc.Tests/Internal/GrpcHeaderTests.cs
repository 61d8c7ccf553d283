using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc.Tests.Internal;

public sealed class GrpcHeaderTests
{
    [Theory]
    [InlineData("1H", 3600_000)]
    [InlineData("2M", 120_000)]
    [InlineData("3S", 3000)]
    [InlineData("250m", 250)]
    [InlineData("1500u", 1.5)]
    [InlineData("2000000n", 2)]
    public void TryParse_EachUnit_Milliseconds(string text, double milliseconds)
    {
        Assert.True(GrpcTimeout.TryParse(text, out var timeout));
        Assert.Equal(milliseconds, timeout.TotalMilliseconds, 3);
    }

    [Theory]
    [InlineData(null)]
    [InlineData("")]
    [InlineData("m")]
    [InlineData("10x")]
    [InlineData("-5m")]
    [InlineData("123456789m")]
    public void TryParse_Malformed_False(string? text) => Assert.False(GrpcTimeout.TryParse(text, out _));

    [Fact]
    public void Format_SmallAndHuge_RoundsUpWithinEightDigits()
    {
        Assert.Equal("1m", GrpcTimeout.Format(TimeSpan.FromTicks(1)));
        Assert.Equal("301m", GrpcTimeout.Format(TimeSpan.FromMilliseconds(300.2)));
        Assert.Equal("100000S", GrpcTimeout.Format(TimeSpan.FromSeconds(100_000)));
        Assert.True(GrpcTimeout.Format(TimeSpan.FromDays(100_000)).Length <= 9);
    }

    [Theory]
    [InlineData("plain text", "plain text")]
    [InlineData("50% done", "50%25 done")]
    [InlineData("é\n", "%C3%A9%0A")]
    public void Encode_Message_PercentEncodesOutsidePrintableAsciiAndPercent(string text, string encoded)
    {
        Assert.Equal(encoded, GrpcMessage.Encode(text));
        Assert.Equal(text, GrpcMessage.Decode(encoded));
    }

    [Fact]
    public void Decode_MalformedEscape_KeptAsIs() => Assert.Equal("100%zz", GrpcMessage.Decode("100%zz"));
}

using Pmpi.Rpc.Internal;

namespace Pmpi.Rpc.Tests.Internal;

public sealed class GrpcHeaderTests
{
    [Theory]
    [InlineData("plain text", "plain text")]
    [InlineData("50% done", "50%25 done")]
    [InlineData("é\n", "%C3%A9%0A")]
    public void Encode_Message_PercentEncodesOutsidePrintableAsciiAndPercent(string text, string encoded) =>
        Assert.Equal(encoded, GrpcMessage.Encode(text));
}

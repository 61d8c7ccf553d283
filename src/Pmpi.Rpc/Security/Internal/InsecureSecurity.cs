namespace Pmpi.Rpc.Security.Internal;

/// <summary>h2c, every caller accepted (<see cref="RpcSecurity.Insecure"/>).</summary>
internal sealed class InsecureSecurity : RpcSecurity
{
    private static readonly byte[] PublicKey = new byte[32];

    public override bool UsesTls => false;

    public override string Description => "no security (--insecure: cleartext, every caller accepted)";

    internal override ReadOnlySpan<byte> TicketKey => PublicKey;

    internal override bool TryAuthenticate(in CallerEvidence caller, out string failure)
    {
        failure = "";
        return true;
    }
}

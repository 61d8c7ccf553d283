namespace Pmpi.Rpc.Security;

/// <summary>
/// What a server knows of a call's caller when it asks <see cref="RpcSecurity"/> whether the caller belongs to the
/// cluster, independent of the server that received the call.
/// </summary>
/// <param name="Path">The method's path, e.g. "/pmpi.v1.Agent/Launch" (a request signature covers it).</param>
/// <param name="Signature">The request's signature header (request signing); empty when absent.</param>
/// <param name="PresentedCertificate">Whether the connection's TLS handshake admitted a client certificate.</param>
internal readonly record struct CallerEvidence(string Path, string Signature, bool PresentedCertificate);

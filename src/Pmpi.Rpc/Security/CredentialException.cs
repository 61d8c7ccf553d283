namespace Pmpi.Rpc.Security;

/// <summary>A cluster credential is missing, incomplete, malformed or exposed; the message names the file.</summary>
/// <param name="message">What is wrong and where.</param>
/// <param name="innerException">The underlying failure, if any.</param>
public sealed class CredentialException(string message, Exception? innerException = null) : Exception(message, innerException);

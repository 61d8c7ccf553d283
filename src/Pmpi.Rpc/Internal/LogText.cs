namespace Pmpi.Rpc.Internal;

/// <summary>Text from a caller on its way into a log line.</summary>
internal static class LogText
{
    /// <summary>
    /// A refusal's reason may quote what an unauthenticated caller sent (a job id, a header): one line of at most 300
    /// characters, so a caller can neither forge log lines nor flood the log.
    /// </summary>
    public static string Printable(string reason)
    {
        const int Limit = 300;
        var line = string.Create(Math.Min(reason.Length, Limit), reason, static (span, text) =>
        {
            for (int i = 0; i < span.Length; i++) span[i] = char.IsControl(text[i]) ? '?' : text[i];
        });
        return reason.Length > Limit ? line + "..." : line;
    }
}

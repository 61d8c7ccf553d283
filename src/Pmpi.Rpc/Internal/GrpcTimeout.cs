using System.Globalization;

namespace Pmpi.Rpc.Internal;

/// <summary>The grpc-timeout header: a positive integer of at most 8 digits and a unit (H, M, S, m, u, n).</summary>
internal static class GrpcTimeout
{
    private const long MaxValue = 99_999_999;

    /// <summary>Parses a grpc-timeout value; false for anything malformed (the call then has no deadline).</summary>
    public static bool TryParse(string? text, out TimeSpan timeout)
    {
        timeout = default;
        if (string.IsNullOrEmpty(text) || text.Length < 2 || text.Length > 9
            || !long.TryParse(text.AsSpan(0, text.Length - 1), NumberStyles.None, CultureInfo.InvariantCulture, out var value))
            return false;
        timeout = text[^1] switch
        {
            'H' => TimeSpan.FromHours(value),
            'M' => TimeSpan.FromMinutes(value),
            'S' => TimeSpan.FromSeconds(value),
            'm' => TimeSpan.FromMilliseconds(value),
            'u' => TimeSpan.FromMicroseconds(value),
            'n' => TimeSpan.FromTicks(value / 100),
            _ => TimeSpan.MinValue,
        };
        return timeout != TimeSpan.MinValue;
    }

    /// <summary>Formats a timeout, rounding up to the finest unit that fits the 8 digits.</summary>
    public static string Format(TimeSpan timeout)
    {
        // Rounding up keeps "a deadline not yet passed" from becoming 0, which a server reads as already expired.
        long milliseconds = Math.Max(1, (long)Math.Ceiling(timeout.TotalMilliseconds));
        if (milliseconds <= MaxValue) return Text(milliseconds, 'm');
        long seconds = (long)Math.Ceiling(timeout.TotalSeconds);
        if (seconds <= MaxValue) return Text(seconds, 'S');
        long minutes = (long)Math.Ceiling(timeout.TotalMinutes);
        if (minutes <= MaxValue) return Text(minutes, 'M');
        return Text(Math.Min(MaxValue, (long)Math.Ceiling(timeout.TotalHours)), 'H');
    }

    private static string Text(long value, char unit) => value.ToString(CultureInfo.InvariantCulture) + unit;
}

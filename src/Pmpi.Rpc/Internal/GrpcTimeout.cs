using System.Globalization;

namespace Pmpi.Rpc.Internal;

/// <summary>The grpc-timeout header: up to 8 digits and a unit (H, M, S, m, u, n).</summary>
internal static class GrpcTimeout
{
    public static bool TryParse(string? text, out TimeSpan timeout)
    {
        timeout = default;
        if (string.IsNullOrEmpty(text) || text.Length < 2 || !long.TryParse(text.AsSpan(0, text.Length - 1), NumberStyles.None, CultureInfo.InvariantCulture, out var value))
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

    public static string Format(TimeSpan timeout) =>
        Math.Max(1, (long)Math.Ceiling(timeout.TotalMilliseconds)).ToString(CultureInfo.InvariantCulture) + "m";
}

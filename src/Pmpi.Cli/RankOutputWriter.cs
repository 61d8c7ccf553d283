using System.Text;
using Pmpi.Rpc.V1;

namespace Pmpi.Cli;

/// <summary>
/// Prints the ranks' output as `pmpi run` shows it: each line tagged "[rank] " (a piece of a line longer than the
/// agent's cap then prints as a line of its own), or untagged as the rank wrote it, a long line's pieces joined again.
/// Untagged, a rank's pieces are held until its line ends, so that long lines two ranks write at once do not
/// interleave; a line longer than <see cref="MaxHeldChars"/> is written on as it comes.
/// </summary>
internal sealed class RankOutputWriter(bool tagged)
{
    private const int MaxHeldChars = 1 << 20;
    private readonly Dictionary<(int Rank, bool IsError), StringBuilder> _held = [];

    public async Task WriteAsync(RankOutput output)
    {
        var writer = output.IsError ? Console.Error : Console.Out;
        if (tagged)
        {
            await writer.WriteLineAsync($"[{output.Rank}] {output.Line}").ConfigureAwait(false);
            return;
        }
        var key = (output.Rank, output.IsError);
        if (output.Continues)
        {
            if (!_held.TryGetValue(key, out var held)) _held[key] = held = new StringBuilder();
            held.Append(output.Line);
            if (held.Length <= MaxHeldChars) return;
            await writer.WriteAsync(held.ToString()).ConfigureAwait(false);
            held.Clear();
            return;
        }
        if (_held.Remove(key, out var start)) await writer.WriteLineAsync(start.Append(output.Line).ToString()).ConfigureAwait(false);
        else await writer.WriteLineAsync(output.Line).ConfigureAwait(false);
    }

    /// <summary>Writes what is held of lines whose end never came (the agent ends every stream with a line's end, so only a broken submission leaves any).</summary>
    public async Task EndAsync()
    {
        foreach (var ((_, isError), held) in _held) await (isError ? Console.Error : Console.Out).WriteLineAsync(held.ToString()).ConfigureAwait(false);
        _held.Clear();
    }
}

using System.Globalization;
using System.Text.RegularExpressions;

namespace Pmpi.Agent.Computation;

/// <summary>A host of mpirun's host list, whose agent runs its ranks.</summary>
/// <param name="Host">The host name or address, as written (an IPv6 address in brackets).</param>
/// <param name="Port">The port its agent listens on: <see cref="HostList.DefaultPort"/> unless a hostfile's <c>port=N</c> says otherwise.</param>
/// <param name="Slots">Ranks it takes before it is oversubscribed; null when a hostfile line does not say (<c>slots=N</c>).</param>
public sealed record HostSlots(string Host, int Port, int? Slots);

/// <summary>
/// mpirun's two ways to name hosts: <c>-H host[:slots],...</c> (a host without slots counts 1 per listing) and Open
/// MPI's hostfile (<c>host [slots=N] [max_slots=N]</c> per line, <c>#</c> comments, blank lines; PMPI adds
/// <c>port=N</c> for an agent off the default port). A host named twice is one host whose slots add up.
/// </summary>
public static partial class HostList
{
    /// <summary>The port <c>pmpi agent</c> listens on unless told otherwise: 7300.</summary>
    public const int DefaultPort = 7300;

    /// <summary>Reads <c>-H</c>'s values, each a comma-separated list of <c>host[:slots]</c>.</summary>
    /// <exception cref="FormatException">An item is not a host with a positive number of slots; the message names it.</exception>
    public static IReadOnlyList<HostSlots> ParseHosts(IEnumerable<string> lists)
    {
        ArgumentNullException.ThrowIfNull(lists);
        var hosts = new List<HostSlots>();
        foreach (var item in lists.SelectMany(list => list.Split(',')))
        {
            // host:slots, where the host may be a bracketed IPv6 address with colons of its own.
            int colon = item.LastIndexOf(':');
            bool hasSlots = colon >= 0 && !item.EndsWith(']');
            string host = hasSlots ? item[..colon] : item;
            if (!IsHost(host)) throw new FormatException($"-H {item}: '{host}' is not a host name or address.");
            int slots = 1;
            if (hasSlots && !TryCount(item[(colon + 1)..], out slots)) throw new FormatException($"-H {item}: '{item[(colon + 1)..]}' is not a number of slots (1 or more).");
            Add(hosts, new HostSlots(host, DefaultPort, slots));
        }
        return hosts;
    }

    /// <summary>Reads a hostfile's text.</summary>
    /// <param name="text">The file's text.</param>
    /// <param name="fileName">The file as the user named it, for errors.</param>
    /// <exception cref="FormatException">A line is not a host with known keywords, or names no host at all; the message names file and line.</exception>
    public static IReadOnlyList<HostSlots> ParseFile(string text, string fileName)
    {
        ArgumentNullException.ThrowIfNull(text);
        var hosts = new List<HostSlots>();
        var lines = text.Split('\n');
        for (int number = 1; number <= lines.Length; number++)
        {
            var line = lines[number - 1];
            int comment = line.IndexOf('#');
            var words = (comment >= 0 ? line[..comment] : line).Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries);
            if (words.Length == 0) continue;
            if (!IsHost(words[0])) throw Error(fileName, number, $"'{words[0]}' is not a host name or address");
            int? slots = null;
            int port = DefaultPort;
            foreach (var word in words[1..])
            {
                var pair = word.Split('=', 2);
                int value = 0;
                if (pair.Length != 2 || pair[0] is not ("slots" or "max_slots" or "port") || !TryCount(pair[1], out value) || (pair[0] == "port" && value > 65535))
                {
                    throw Error(fileName, number, pair.Length == 2 && pair[0] is "slots" or "max_slots" or "port"
                        ? $"'{word}': {pair[0]} takes a number ({(pair[0] == "port" ? "1-65535" : "1 or more")})"
                        : $"'{word}' is not slots=N, max_slots=N or port=N");
                }
                if (pair[0] == "slots") slots = value;
                else if (pair[0] == "port") port = value;
            }
            Add(hosts, new HostSlots(words[0], port, slots));
        }
        if (hosts.Count == 0) throw Error(fileName, lines.Length, "the hostfile names no host");
        return hosts;
    }

    /// <summary>Adds a host, or its slots to the same host (and port) named before.</summary>
    private static void Add(List<HostSlots> hosts, HostSlots host)
    {
        int earlier = hosts.FindIndex(known => known.Port == host.Port && string.Equals(known.Host, host.Host, StringComparison.OrdinalIgnoreCase));
        if (earlier < 0) hosts.Add(host);
        // A listing without slots counts as one more slot, as -H's does.
        else hosts[earlier] = hosts[earlier] with { Slots = (hosts[earlier].Slots ?? 1) + (host.Slots ?? 1) };
    }

    private static bool TryCount(string text, out int count) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out count) && count >= 1;

    private static bool IsHost(string text) => HostPattern().IsMatch(text);

    private static FormatException Error(string fileName, int line, string message) => new($"{fileName}({line}): error: {message}.");

    /// <summary>A DNS name, an IPv4 address or a bracketed IPv6 address: the hosts computation.xsd's endpoints take.</summary>
    [GeneratedRegex(@"^([A-Za-z0-9]([A-Za-z0-9.\-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])$")]
    private static partial Regex HostPattern();
}

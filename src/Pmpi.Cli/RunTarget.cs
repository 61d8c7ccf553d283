using System.CommandLine;
using System.Net;
using System.Text.RegularExpressions;
using Pmpi.Agent.Computation;
using Pmpi.Agent.Hosting;

namespace Pmpi.Cli;

/// <summary>
/// What `pmpi run` submits: the computation file its target names, or the one mpirun's form stands for
/// (<see cref="SpmdComputation"/>), on this machine or the hosts <c>-H</c> or <c>--hostfile</c> name. Whatever cannot
/// be run is refused here, in the options' terms, before anything starts.
/// </summary>
internal static class RunTarget
{
    /// <summary>
    /// The computation's file name and text, or why there is none. For hosts that are all this machine, the embedded
    /// agent's slots (<paramref name="embedded"/>) become theirs; other hosts need a master they reach, unless the
    /// routes are only shown (<paramref name="showRoutes"/>).
    /// </summary>
    /// <remarks>
    /// Inside a Slurm allocation (<see cref="SlurmAllocation"/>), with no master and no hosts named, the program runs
    /// on the allocation's nodes and slots, as mpirun's does (<paramref name="environmentVariable"/> reads the SLURM_*
    /// variables): <paramref name="allocation"/> is called with the allocation and a function that builds the
    /// computation on given nodes, the text returned being the one on the agents' default port; `pmpi run` starts the
    /// agents (<see cref="SlurmAgents"/>) and builds it again on the nodes as they listen.
    /// </remarks>
    public static async Task<(string FileName, string Xml, string? Refusal)> ReadAsync(ParseResult parse, RunOptions options, Uri? master, AgentOptions embedded,
        bool showRoutes, Func<string, string?> environmentVariable, Action<SlurmAllocation, Func<IReadOnlyList<(string Name, string Agent, int Slots)>, string>> allocation,
        CancellationToken cancellationToken)
    {
        string target = parse.GetValue(options.Target)!;
        string[] arguments = parse.GetValue(options.ProgramArguments) ?? [];
        int? ranks = parse.GetValue(options.Ranks);
        string[] exports = parse.GetValue(options.Export) ?? [];
        string[] hostLists = parse.GetValue(options.Hosts) ?? [];
        string? hostFile = parse.GetValue(options.HostFile);
        string? mapBy = parse.GetValue(options.MapBy);
        bool oversubscribe = parse.GetValue(options.Oversubscribe);
        if (RunOptions.IsComputationFile(target))
        {
            string? misplaced = ranks is not null ? $"-n {ranks}: a computation file names its own ranks (<ranks count=\"N\">)"
                : exports.Length > 0 ? $"-x {exports[0]}: a computation file sets its ranks' variables itself (<env name=\"...\" value=\"...\"/>)"
                : hostLists.Length > 0 || hostFile is not null ? $"{(hostFile is null ? "-H" : "--hostfile")}: a computation file names its own nodes (<node name=\"...\" agent=\"host:port\" slots=\"N\"/>)"
                : mapBy is not null ? $"--map-by {mapBy}: a computation file says it itself (<computation map-by=\"{mapBy}\">)"
                : oversubscribe ? "--oversubscribe: a computation file allows it itself (<computation oversubscribe=\"true\">)"
                : arguments.Length > 0 ? $"'{arguments[0]}': a computation file takes no arguments (<ranks args=\"...\">)"
                : null;
            if (misplaced is not null) return Refused($"pmpi run: {misplaced}.");
            var fileName = Path.GetFullPath(target);
            if (!File.Exists(fileName)) return Refused($"pmpi: computation file '{target}' does not exist.");
            // Checked before reading, so a huge file never reaches memory.
            if (new FileInfo(fileName).Length > ComputationFile.MaxCharacters) return Refused($"{fileName}: error: {ComputationFile.TooLargeMessage}");
            return (fileName, await File.ReadAllTextAsync(fileName, cancellationToken).ConfigureAwait(false), null);
        }

        if (ProgramLookup.Find(target) is not { } program) return Refused($"pmpi run: program '{target}' is neither in the current directory nor on PATH.");
        if (parse.GetValue(options.Stage) && program != Path.GetFullPath(target))
            return Refused($"pmpi run --stage: '{target}' was found on PATH ({program}); staging ships a program's whole directory, so name a program in a directory of its own (e.g. bin/Release/net10.0/App.dll).");
        // Checked here for this machine's ranks; other hosts' agents check their own.
        if (master is null && hostLists.Length == 0 && hostFile is null && !File.Exists(program)) return Refused($"pmpi run: program '{target}' does not exist (looked for {program}).");
        if (SpmdComputation.ReadExports(exports, out var exportError) is not { } environment) return Refused(exportError!);
        if (hostLists.Length > 0 && hostFile is not null) return Refused("pmpi run: give -H or --hostfile, not both.");
        IReadOnlyList<HostSlots> hosts;
        try
        {
            hosts = hostFile is not null ? HostList.ParseFile(await File.ReadAllTextAsync(hostFile, cancellationToken).ConfigureAwait(false), hostFile)
                : HostList.ParseHosts(hostLists);
        }
        catch (FormatException e)
        {
            return Refused($"pmpi run: {e.Message}");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            return Refused($"pmpi run: --hostfile {hostFile}: {e.Message}");
        }

        // Explicit hosts and a master win over the allocation, as with mpirun.
        SlurmAllocation? slurm = null;
        if (master is null && hosts.Count == 0)
        {
            try
            {
                slurm = SlurmAllocation.Read(environmentVariable);
            }
            catch (FormatException e)
            {
                return Refused($"pmpi run: inside a Slurm allocation pmpi run runs on its nodes, but {e.Message}");
            }
        }

        // Hosts that are all this machine are the embedded agent's; otherwise each host is a node whose agent the master dials.
        var nodes = new List<(string Name, string Agent, int Slots)>();
        if (slurm is not null)
        {
            foreach (var node in slurm.Nodes) nodes.Add((SpmdComputation.NameOf(node.Host), $"{node.Host}:{node.Port}", node.Slots ?? 1));
        }
        else if (master is null && hosts.All(IsThisMachine))
        {
            if (hosts.Count > 0) embedded.Slots = hosts.Sum(host => host.Slots ?? System.Environment.ProcessorCount);
        }
        else if (master is null && !showRoutes)
        {
            return Refused($"pmpi run: {hosts.First(host => !IsThisMachine(host)).Host} is not this machine: a job on other hosts needs a master their ranks reach, an agent of the cluster: give --master host:port.");
        }
        else
        {
            foreach (var host in hosts) nodes.Add((NodeName(host, nodes), $"{host.Host}:{host.Port}", host.Slots ?? 1));
        }

        long slots = nodes.Count > 0 ? nodes.Sum(node => (long)node.Slots) : embedded.Slots;
        string where = slurm is not null ? $"the {slots} slots of the Slurm allocation ({slurm.Description})" : hosts.Count > 0 ? $"the {slots} slots of the hosts {(hostFile is null ? "-H names" : hostFile + " names")}" : $"the {slots} slots of this machine (one per logical core)";
        if ((ranks ?? (master is null || nodes.Count > 0 ? (int)Math.Min(slots, int.MaxValue) : null)) is not { } count)
            return Refused("pmpi run: with --master, give the number of ranks: -n N, or the hosts: -H or --hostfile.");
        if (count < 1) return Refused($"pmpi: -n {count}: a job needs at least 1 rank.");
        if (count > ComputationFile.MaxWorldSize) return Refused($"pmpi: -n {count}: a job runs at most {ComputationFile.MaxWorldSize:N0} ranks.");
        long cap = oversubscribe ? slots * AgentOptions.OversubscribedRanksPerSlot : slots;
        // Said here in the options' terms; the master would say the same of the computation they stand for. A bare
        // --master runs on its own agent, whose slots only it knows.
        if ((master is null || nodes.Count > 0) && count > cap)
        {
            return Refused(oversubscribe
                ? $"pmpi: -n {count} exceeds {where} even with --oversubscribe, which runs up to {AgentOptions.OversubscribedRanksPerSlot} per slot: {cap}."
                : $"pmpi: -n {count} exceeds {where}; add --oversubscribe to run up to {slots * AgentOptions.OversubscribedRanksPerSlot}.");
        }
        var mapping = mapBy == "node" ? RankMapping.Node : RankMapping.Slot;
        if (slurm is not null) allocation(slurm, listening => SpmdComputation.Build(program, count, oversubscribe, arguments, environment, listening, mapping));
        return (Path.GetFullPath("pmpi-run.xml"), SpmdComputation.Build(program, count, oversubscribe, arguments, environment, nodes, mapping), null);
    }

    /// <summary>
    /// What the master or the computation reader says of the computation mpirun's form stands for, in the command
    /// line's terms: a location in <paramref name="fileName"/>, a file that does not exist, would only mislead.
    /// </summary>
    public static string Unlocated(string message, string fileName) =>
        Regex.Replace(message, $@"(?m)^{Regex.Escape(fileName)}(\(\d+,\d+\): error)?: ", "pmpi run: ");

    private static (string, string, string?) Refused(string reason) => ("", "", reason);

    /// <summary>Whether a host is this machine, whose ranks the embedded agent runs: by name, loopback address or host name, on the agents' default port.</summary>
    private static bool IsThisMachine(HostSlots host)
    {
        if (host.Port != HostList.DefaultPort) return false;
        string name = host.Host;
        if (name.Equals("localhost", StringComparison.OrdinalIgnoreCase)) return true;
        if (IPAddress.TryParse(name.Trim('[', ']'), out var address)) return IPAddress.IsLoopback(address);
        string own = Dns.GetHostName();
        return name.Equals(own, StringComparison.OrdinalIgnoreCase) || name.Equals(own.Split('.')[0], StringComparison.OrdinalIgnoreCase)
            || name.Equals(System.Environment.MachineName, StringComparison.OrdinalIgnoreCase);
    }

    /// <summary>A computation node name for a host: its name made one (an agent off the default port adds it), unique among <paramref name="named"/>.</summary>
    private static string NodeName(HostSlots host, List<(string Name, string Agent, int Slots)> named)
    {
        string name = SpmdComputation.NameOf(host.Port == HostList.DefaultPort ? host.Host : $"{host.Host}-{host.Port}");
        string unique = name;
        for (int n = 2; named.Exists(node => node.Name == unique); n++) unique = $"{name}-{n}";
        return unique;
    }
}

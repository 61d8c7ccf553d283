using System.Globalization;

namespace Pmpi.Agent.Computation;

/// <summary>
/// The Slurm allocation a process runs in (under <c>salloc</c>, in an <c>sbatch</c> script), as its environment
/// describes it: the job's id, its nodes (<c>SLURM_JOB_NODELIST</c>, a hostlist expression such as
/// <c>node[01-04,07]</c>) and each node's slots (<c>SLURM_TASKS_PER_NODE</c>, such as <c>2(x3),1</c>, else
/// <c>SLURM_JOB_CPUS_PER_NODE</c>), which is what Open MPI's mpirun takes inside an allocation.
/// </summary>
/// <param name="JobId">SLURM_JOB_ID.</param>
/// <param name="Nodes">The nodes in the order Slurm lists them, each with its slots, on <see cref="HostList.DefaultPort"/>.</param>
/// <param name="Description">The variables it was read from, as they were set, for messages: <c>SLURM_JOB_ID=7, SLURM_JOB_NODELIST=n[1-2], SLURM_TASKS_PER_NODE=2(x2)</c>.</param>
public sealed record SlurmAllocation(string JobId, IReadOnlyList<HostSlots> Nodes, string Description)
{
    /// <summary>The variable naming the job: <c>SLURM_JOB_ID</c>.</summary>
    public const string JobIdVariable = "SLURM_JOB_ID";

    /// <summary>The most nodes a hostlist expression may stand for, so a malformed one cannot exhaust memory.</summary>
    public const int MaxNodes = 65_536;

    /// <summary>The slots of every node together.</summary>
    public long Slots => Nodes.Sum(node => (long)(node.Slots ?? 1));

    /// <summary>
    /// The allocation <paramref name="read"/> describes, or null outside one (SLURM_JOB_ID or the node list unset).
    /// </summary>
    /// <param name="read">Reads an environment variable (null when unset).</param>
    /// <exception cref="FormatException">A variable is malformed, or the slots do not match the nodes; the message names the variable and its value.</exception>
    public static SlurmAllocation? Read(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        if (read(JobIdVariable) is not { Length: > 0 } jobId) return null;
        var (listVariable, list) = First(read, "SLURM_JOB_NODELIST", "SLURM_NODELIST");
        if (list is null) return null;
        var (slotsVariable, slots) = First(read, "SLURM_TASKS_PER_NODE", "SLURM_JOB_CPUS_PER_NODE");
        if (slots is null) throw new FormatException($"{listVariable}={list} is set but neither SLURM_TASKS_PER_NODE nor SLURM_JOB_CPUS_PER_NODE is: the allocation's slots are unknown.");
        var names = ExpandHostList(list, listVariable);
        var counts = ExpandCounts(slots, slotsVariable);
        if (counts.Count != names.Count)
            throw new FormatException($"{slotsVariable}={slots} gives {counts.Count} nodes their slots, but {listVariable}={list} names {names.Count}.");
        var nodes = new HostSlots[names.Count];
        for (int i = 0; i < nodes.Length; i++) nodes[i] = new HostSlots(names[i], HostList.DefaultPort, counts[i]);
        return new SlurmAllocation(jobId, nodes, $"{JobIdVariable}={jobId}, {listVariable}={list}, {slotsVariable}={slots}");
    }

    /// <summary>
    /// Expands a Slurm hostlist expression: comma-separated hosts, each with any number of bracketed ranges and
    /// numbers (<c>node[01-04,07]</c>, <c>rack[1-2]-n[1-3]</c>), a range keeping its lower bound's zero padding.
    /// </summary>
    /// <param name="expression">The expression.</param>
    /// <param name="variable">The variable it came from, for errors.</param>
    /// <exception cref="FormatException">The expression is malformed or stands for more than <see cref="MaxNodes"/> hosts; the message names <paramref name="variable"/>.</exception>
    public static IReadOnlyList<string> ExpandHostList(string expression, string variable)
    {
        ArgumentNullException.ThrowIfNull(expression);
        var hosts = new List<string>();
        int depth = 0, start = 0;
        for (int i = 0; i <= expression.Length; i++)
        {
            char c = i < expression.Length ? expression[i] : ',';
            if (c == '[' && ++depth > 1) throw Malformed(expression, variable, $"'[' inside brackets at position {i + 1}");
            if (c == ']' && --depth < 0) throw Malformed(expression, variable, $"']' without '[' at position {i + 1}");
            if (c != ',' || depth > 0) continue;
            ExpandHost(expression[start..i], expression, variable, hosts);
            start = i + 1;
        }
        if (depth != 0) throw Malformed(expression, variable, "'[' without ']'");
        return hosts;
    }

    /// <summary>Expands Slurm's per-node counts, <c>2(x3),1</c>: each count, repeated as its <c>(xN)</c> says.</summary>
    /// <exception cref="FormatException">An item is not a count, with an optional repetition; the message names <paramref name="variable"/>.</exception>
    public static IReadOnlyList<int> ExpandCounts(string text, string variable)
    {
        ArgumentNullException.ThrowIfNull(text);
        var counts = new List<int>();
        foreach (var item in text.Split(','))
        {
            int open = item.IndexOf('(', StringComparison.Ordinal);
            string count = open < 0 ? item : item[..open];
            int repeat = 1;
            bool valid = TryNumber(count, out int value) && value >= 1
                && (open < 0 || (item.EndsWith(')') && item[open..].StartsWith("(x", StringComparison.Ordinal) && TryNumber(item[(open + 2)..^1], out repeat) && repeat >= 1));
            if (!valid) throw new FormatException($"{variable}={text}: '{item}' is not a count with an optional repetition, such as 2 or 2(x3).");
            if (counts.Count + (long)repeat > MaxNodes) throw new FormatException($"{variable}={text}: more than {MaxNodes} nodes.");
            for (int i = 0; i < repeat; i++) counts.Add(value);
        }
        return counts;
    }

    private static void ExpandHost(string host, string expression, string variable, List<string> hosts)
    {
        if (host.Length == 0) throw Malformed(expression, variable, "an empty host name");
        // Each bracket multiplies the names so far by its numbers: prefix[1-2]-n[1-3] is six hosts.
        var names = new List<string> { "" };
        int i = 0;
        while (i < host.Length)
        {
            int open = host.IndexOf('[', i);
            string text = open < 0 ? host[i..] : host[i..open];
            if (text.Length > 0) names = names.ConvertAll(name => name + text);
            if (open < 0) break;
            int close = host.IndexOf(']', open);
            var numbers = ExpandRanges(host[(open + 1)..close], expression, variable);
            if ((long)names.Count * numbers.Count + hosts.Count > MaxNodes) throw Malformed(expression, variable, $"more than {MaxNodes} hosts");
            names = names.SelectMany(name => numbers.Select(number => name + number)).ToList();
            i = close + 1;
        }
        foreach (var name in names)
        {
            if (!IsHostName(name)) throw Malformed(expression, variable, $"'{name}' is not a host name");
            hosts.Add(name);
        }
    }

    /// <summary>The numbers of one bracket, <c>01-04,07</c>, as text padded as written.</summary>
    private static List<string> ExpandRanges(string ranges, string expression, string variable)
    {
        var numbers = new List<string>();
        foreach (var range in ranges.Split(','))
        {
            var bounds = range.Split('-');
            if (bounds.Length > 2 || !TryNumber(bounds[0], out int low) || (bounds.Length == 2 && !TryNumber(bounds[1], out _)))
                throw Malformed(expression, variable, $"'[{ranges}]' holds '{range}', not a number or a range such as 01-04");
            int high = bounds.Length == 2 ? int.Parse(bounds[1], CultureInfo.InvariantCulture) : low;
            if (high < low) throw Malformed(expression, variable, $"the range '{range}' ends before it starts");
            if (high - (long)low >= MaxNodes) throw Malformed(expression, variable, $"more than {MaxNodes} hosts");
            string format = new('0', bounds[0].Length);
            for (int n = low; n <= high; n++) numbers.Add(n.ToString(format, CultureInfo.InvariantCulture));
        }
        return numbers;
    }

    private static (string Variable, string? Value) First(Func<string, string?> read, string variable, string fallback) =>
        read(variable) is { Length: > 0 } value ? (variable, value) : (fallback, read(fallback) is { Length: > 0 } other ? other : null);

    private static bool TryNumber(string text, out int value) =>
        int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out value) && text.Length <= 9;

    private static bool IsHostName(string name)
    {
        if (name.Length is 0 or > 253 || !char.IsAsciiLetterOrDigit(name[0]) || !char.IsAsciiLetterOrDigit(name[^1])) return false;
        foreach (char c in name) if (!char.IsAsciiLetterOrDigit(c) && c is not ('-' or '.')) return false;
        return true;
    }

    private static FormatException Malformed(string expression, string variable, string why) =>
        new($"{variable}={expression} is not a Slurm hostlist expression such as node[01-04,07]: {why}.");
}

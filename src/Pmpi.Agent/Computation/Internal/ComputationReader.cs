using System.Collections.Immutable;
using System.Globalization;
using System.Xml;
using System.Xml.Linq;
using Pmpi.Agent.Hosting;

namespace Pmpi.Agent.Computation.Internal;

/// <summary>
/// Builds a <see cref="ComputationDefinition"/> from a schema-valid document and runs the checks a schema cannot
/// express. Errors point at the attribute to blame where there is one, else at its element.
/// </summary>
internal sealed class ComputationReader(string fileName, Func<string, bool> programExists)
{
    // Ranks learn their identity (job id, rank, size, master, token) from PMPI_* variables (DESIGN "Launch" step 3);
    // a user variable must not be able to forge one.
    private const string ReservedEnvironmentPrefix = "PMPI_";

    private static readonly XNamespace Ns = ComputationFile.Namespace;

    private readonly List<ComputationFileError> _errors = [];

    public List<ComputationFileError> Errors => _errors;

    /// <summary>Returns the computation, or null when the checks added to <see cref="Errors"/>.</summary>
    public ComputationDefinition? Read(XElement root)
    {
        string baseDirectory = Path.GetDirectoryName(Path.GetFullPath(fileName)) ?? Directory.GetCurrentDirectory();

        var domains = ReadDomains(root);
        var nodes = ReadNodes(root, domains);
        var sharedEnvironment = ReadEnvironment(root.Elements(Ns + "env"), ImmutableSortedDictionary<string, string>.Empty);
        bool oversubscribe = root.Attribute("oversubscribe") is { } o && XmlConvert.ToBoolean(o.Value);
        string workingDirectory = root.Attribute("workdir") is { } w ? ForeignPath.Resolve(w.Value, baseDirectory) : baseDirectory;

        var nodesByName = new Dictionary<string, NodeDefinition>(StringComparer.Ordinal);
        foreach (var node in nodes) nodesByName.TryAdd(node.Name, node);

        var groups = ImmutableArray.CreateBuilder<RanksDefinition>();
        foreach (var element in root.Elements(Ns + "ranks"))
        {
            groups.Add(ReadRanks(element, groups.Count, baseDirectory, workingDirectory, sharedEnvironment, nodesByName, nodes.Length));
        }

        var computation = new ComputationDefinition(
            root.Attribute("name")!.Value,
            ReadTimeout(root),
            oversubscribe,
            domains,
            nodes,
            groups.ToImmutable(),
            At(root))
        {
            Mapping = root.Attribute("map-by")?.Value == "node" ? RankMapping.Node : RankMapping.Slot,
        };

        if (CheckWorldSize(computation) && !computation.IsLocal) CheckSlots(computation, nodesByName);
        return _errors.Count == 0 ? computation : null;
    }

    private ImmutableArray<DomainDefinition> ReadDomains(XElement root)
    {
        var domains = ImmutableArray.CreateBuilder<DomainDefinition>();
        var seen = new Dictionary<string, SourceLocation>(StringComparer.Ordinal);
        foreach (var element in root.Elements(Ns + "domain"))
        {
            var name = element.Attribute("name")!;
            if (!seen.TryAdd(name.Value, At(element)))
            {
                Error(name, $"domain '{name.Value}' is already declared at {seen[name.Value]}");
            }
            var gateway = element.Attribute("gateway");
            if (gateway is not null) CheckPort(gateway);
            var reachable = element.Attribute("reachable")?.Value
                .Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries).ToImmutableArray() ?? [];
            domains.Add(new DomainDefinition(name.Value, gateway?.Value, reachable, At(element)));
        }

        if (domains.Count > 1)
        {
            foreach (var domain in domains)
            {
                if (domain.Gateway is null)
                {
                    Error(domain.Location, $"domain '{domain.Name}' has no gateway; with more than one domain, every domain needs gateway=\"host:port\" so other domains can reach its ranks");
                }
            }
        }

        foreach (var (element, domain) in root.Elements(Ns + "domain").Zip(domains))
        {
            foreach (var other in domain.Reachable)
            {
                if (!seen.ContainsKey(other))
                {
                    Error(element.Attribute("reachable")!, $"domain '{domain.Name}' declares unknown domain '{other}' reachable");
                }
            }
        }
        return domains.ToImmutable();
    }

    private ImmutableArray<NodeDefinition> ReadNodes(XElement root, ImmutableArray<DomainDefinition> domains)
    {
        var nodes = ImmutableArray.CreateBuilder<NodeDefinition>();
        var seen = new Dictionary<string, SourceLocation>(StringComparer.Ordinal);
        var domainNames = domains.Select(d => d.Name).ToHashSet(StringComparer.Ordinal);
        foreach (var element in root.Elements(Ns + "node"))
        {
            var name = element.Attribute("name")!;
            if (!seen.TryAdd(name.Value, At(element)))
            {
                Error(name, $"node '{name.Value}' is already declared at {seen[name.Value]}");
            }

            var agent = element.Attribute("agent")!;
            CheckPort(agent);

            string? domain;
            if (element.Attribute("domain") is { } domainAttribute)
            {
                domain = domainAttribute.Value;
                if (!domainNames.Contains(domain))
                {
                    Error(domainAttribute, domains.IsEmpty
                        ? $"node '{name.Value}' names domain '{domain}', but no <domain> is declared"
                        : $"node '{name.Value}' names unknown domain '{domain}' (declared: {string.Join(", ", domainNames)})");
                }
            }
            else if (domains.Length > 1)
            {
                domain = null;
                Error(element, $"node '{name.Value}' has no domain; with more than one domain declared, every node needs domain=\"...\"");
            }
            else
            {
                // Zero or one domain: there is only one place the node can be.
                domain = domains.IsEmpty ? null : domains[0].Name;
            }

            int slots = element.Attribute("slots") is { } s ? XmlConvert.ToInt32(s.Value) : 1;
            nodes.Add(new NodeDefinition(name.Value, agent.Value, domain, slots, At(element)));
        }
        return nodes.ToImmutable();
    }

    private RanksDefinition ReadRanks(
        XElement element,
        int index,
        string baseDirectory,
        string sharedWorkingDirectory,
        ImmutableSortedDictionary<string, string> sharedEnvironment,
        Dictionary<string, NodeDefinition> nodesByName,
        int nodeCount)
    {
        var program = element.Attribute("program")!;
        string programPath = ForeignPath.Resolve(program.Value, baseDirectory);
        bool foreign = ForeignPath.Is(program.Value);
        if (foreign && element.Attribute("node") is null)
        {
            Error(program, $"program '{program.Value}' is a path on {ForeignPath.System} nodes, which this machine cannot check or run; pin these ranks to the node that has it with node=\"...\"");
        }
        else if (!foreign && nodeCount == 0 && !programExists(programPath))
        {
            // The local agent's ranks, on this machine. A node's agent checks its ranks' programs itself when it launches
            // them: the machine that reads the file need not have them.
            Error(program, $"program '{program.Value}' not found (looked for {programPath}); paths are relative to the computation file's directory");
        }

        int count = 1;
        if (element.Attribute("count") is { } countAttribute)
        {
            count = XmlConvert.ToInt32(countAttribute.Value);
            if (count < 1) Error(countAttribute, $"count must be at least 1, found {count}");
        }

        string? node = null;
        if (element.Attribute("node") is { } nodeAttribute)
        {
            node = nodeAttribute.Value;
            if (!nodesByName.ContainsKey(node))
            {
                Error(nodeAttribute, nodeCount == 0
                    ? $"ranks are pinned to node '{node}', but no <node> is declared (a computation without nodes runs on the local agent)"
                    : $"ranks are pinned to unknown node '{node}' (declared: {string.Join(", ", nodesByName.Keys)})");
            }
        }

        var arguments = ImmutableArray.CreateBuilder<string>();
        var argsAttribute = element.Attribute("args");
        if (argsAttribute is not null)
        {
            // Plain white-space splitting, no quoting rules to get wrong across shells; <arg> covers the rest.
            arguments.AddRange(argsAttribute.Value.Split((char[]?)null, StringSplitOptions.RemoveEmptyEntries));
        }
        foreach (var arg in element.Elements(Ns + "arg"))
        {
            if (argsAttribute is not null)
            {
                Error(arg, "use either the args attribute or <arg> elements, not both, so the argument order is unambiguous");
                break;
            }
            arguments.Add(arg.Value);
        }

        bool stage = element.Attribute("stage") is { } stageAttribute && XmlConvert.ToBoolean(stageAttribute.Value);
        if (stage && foreign)
            Error(element.Attribute("stage")!, $"program '{program.Value}' is a path on {ForeignPath.System} nodes, but a staged program is shipped from this machine's files; stage the program's directory as this machine sees it");

        // A program on a node of the other system, or a staged one, runs in its own directory there unless told
        // otherwise (empty: the agent's choice).
        string workingDirectory = element.Attribute("workdir") is { } w ? ForeignPath.Resolve(w.Value, baseDirectory) : foreign || stage ? "" : sharedWorkingDirectory;
        var environment = ReadEnvironment(element.Elements(Ns + "env"), sharedEnvironment);

        return new RanksDefinition(index, program.Value, programPath, count, arguments.ToImmutable(), node, workingDirectory, environment, At(element)) { Stage = stage };
    }

    private ImmutableSortedDictionary<string, string> ReadEnvironment(IEnumerable<XElement> elements, ImmutableSortedDictionary<string, string> inherited)
    {
        var result = inherited.WithComparers(StringComparer.Ordinal).ToBuilder();
        var seen = new Dictionary<string, SourceLocation>(StringComparer.Ordinal);
        foreach (var element in elements)
        {
            var name = element.Attribute("name")!;
            if (name.Value.StartsWith(ReservedEnvironmentPrefix, StringComparison.OrdinalIgnoreCase))
            {
                Error(name, $"environment variable '{name.Value}' is reserved: PMPI sets the {ReservedEnvironmentPrefix}* variables itself");
            }
            // Ordinal-ignore-case: Windows treats names case-insensitively, so FOO and foo would collide there.
            else if (seen.Keys.FirstOrDefault(k => string.Equals(k, name.Value, StringComparison.OrdinalIgnoreCase)) is { } earlier)
            {
                Error(name, $"environment variable '{name.Value}' is already set at {seen[earlier]}");
            }
            else
            {
                seen.Add(name.Value, At(element));
                // An override of an inherited variable replaces it even when spelled in another case (see above).
                foreach (var key in result.Keys.Where(k => string.Equals(k, name.Value, StringComparison.OrdinalIgnoreCase)).ToArray())
                {
                    result.Remove(key);
                }
                result[name.Value] = element.Attribute("value")!.Value;
            }
        }
        return result.ToImmutable();
    }

    private TimeSpan? ReadTimeout(XElement root)
    {
        if (root.Attribute("timeout") is not { } attribute) return null;
        // The schema pattern already restricts the form; Parse only fails on values out of TimeSpan's range.
        if (!TimeSpan.TryParse(attribute.Value, CultureInfo.InvariantCulture, out var timeout))
        {
            Error(attribute, $"timeout '{attribute.Value}' is out of range");
            return null;
        }
        if (timeout <= TimeSpan.Zero) Error(attribute, "timeout must be positive; omit it for no limit");
        return timeout;
    }

    /// <summary>Whether the world's size is within <see cref="ComputationFile.MaxWorldSize"/>; reports the group that crosses it.</summary>
    private bool CheckWorldSize(ComputationDefinition computation)
    {
        long ranks = 0;
        foreach (var group in computation.Ranks)
        {
            ranks += Math.Max(group.Count, 0);
            if (ranks > ComputationFile.MaxWorldSize)
            {
                Error(group.Location, $"the computation has more than {ComputationFile.MaxWorldSize:N0} ranks, the most PMPI runs in one job");
                return false;
            }
        }
        return true;
    }

    private void CheckSlots(ComputationDefinition computation, Dictionary<string, NodeDefinition> nodesByName)
    {
        const string Hint = "set oversubscribe=\"true\" on <computation> to allow it";
        long slots = computation.Nodes.Sum(n => (long)n.Slots);
        if (computation.Oversubscribe)
        {
            // Agents refuse more than this per slot even when asked to oversubscribe: say so before anything launches.
            long cap = slots * AgentOptions.OversubscribedRanksPerSlot;
            if (computation.WorldSize > cap)
                Error(computation.Ranks[^1].Location, $"{computation.WorldSize} ranks exceed {AgentOptions.OversubscribedRanksPerSlot} per slot of the declared nodes' {slots} slots, the most agents run even oversubscribed");
            return;
        }

        // Pinned groups first: each pinned node must hold its own pinned ranks.
        var pinned = new Dictionary<string, long>(StringComparer.Ordinal);
        foreach (var group in computation.Ranks)
        {
            if (group.Node is null || !nodesByName.TryGetValue(group.Node, out var node)) continue;
            long total = pinned.GetValueOrDefault(group.Node) + group.Count;
            pinned[group.Node] = total;
            if (total > node.Slots)
            {
                Error(group.Location, $"{total} ranks pinned to node '{node.Name}' exceed its {node.Slots} slots; {Hint}");
            }
        }

        long ranks = 0;
        foreach (var group in computation.Ranks)
        {
            ranks += Math.Max(group.Count, 0);
            if (ranks > slots)
            {
                // Reported at the group that crosses the line: that is where the user adds or trims.
                Error(group.Location, $"{computation.WorldSize} ranks exceed the {slots} slots of the declared nodes; {Hint}");
                break;
            }
        }
    }

    private void CheckPort(XAttribute endpoint)
    {
        // The schema allows 1-5 digits; the range is checked here.
        var port = int.Parse(endpoint.Value.AsSpan(endpoint.Value.LastIndexOf(':') + 1), CultureInfo.InvariantCulture);
        if (port is < 1 or > 65535)
        {
            Error(endpoint, $"port {port} in {endpoint.Name.LocalName}=\"{endpoint.Value}\" is outside 1-65535");
        }
    }

    private SourceLocation At(IXmlLineInfo node) => ComputationFile.At(fileName, node);

    private void Error(IXmlLineInfo node, string message) => _errors.Add(new(At(node), message));

    private void Error(SourceLocation location, string message) => _errors.Add(new(location, message));
}

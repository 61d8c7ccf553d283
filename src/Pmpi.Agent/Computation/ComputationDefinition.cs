using System.Collections.Immutable;

namespace Pmpi.Agent.Computation;

/// <summary>
/// A validated computation file: what to run, where it may run and how ranks are numbered. Built only by
/// <see cref="ComputationFile"/>, whose checks guarantee the cross references hold (every pinned node and node domain
/// exists, slots suffice unless <see cref="Oversubscribe"/>). As with any record holding immutable collections, equality
/// compares those collections by reference, not by content.
/// </summary>
/// <param name="Name">The computation's name, from the root element.</param>
/// <param name="Timeout">Wall-clock limit after which the job is aborted; null for none.</param>
/// <param name="Oversubscribe">Whether more ranks than slots are allowed. Defaults to false in the file.</param>
/// <param name="Domains">The declared administrative domains, in document order; empty for a single implicit domain.</param>
/// <param name="Nodes">The declared nodes, in document order; empty to run on the embedded local agent.</param>
/// <param name="Ranks">The groups of ranks, in document order, which is world-rank order.</param>
/// <param name="Location">Where the root element is, for errors the master reports later.</param>
public sealed record ComputationDefinition(
    string Name,
    TimeSpan? Timeout,
    bool Oversubscribe,
    ImmutableArray<DomainDefinition> Domains,
    ImmutableArray<NodeDefinition> Nodes,
    ImmutableArray<RanksDefinition> Ranks,
    SourceLocation Location)
{
    /// <summary>How unpinned ranks are spread over the nodes (<c>map-by</c>). Defaults to <see cref="RankMapping.Slot"/>.</summary>
    public RankMapping Mapping { get; init; }

    /// <summary>True when no node is declared, so the submitter's embedded local agent runs every rank.</summary>
    public bool IsLocal => Nodes.IsEmpty;

    /// <summary>The number of ranks in MPI_COMM_WORLD: the sum of every group's count.</summary>
    public int WorldSize
    {
        get
        {
            int size = 0;
            foreach (var group in Ranks) size += group.Count;
            return size;
        }
    }
}

/// <summary>How <see cref="Placement"/> spreads ranks that no group pins to a node: Open MPI's <c>--map-by</c>.</summary>
public enum RankMapping
{
    /// <summary>Fill each node's slots before the next node's: nodes a(2) and b(2) with four ranks give a, a, b, b.</summary>
    Slot,

    /// <summary>One rank per node in turn, skipping full nodes: nodes a(2) and b(2) with four ranks give a, b, a, b.</summary>
    Node,
}

/// <summary>An administrative domain: a network behind one gateway (DESIGN "Domains").</summary>
/// <param name="Name">Unique domain name.</param>
/// <param name="Gateway">The gateway's host:port as written; null only when it is the computation's single domain.</param>
/// <param name="Reachable">Other domains whose ranks this domain's ranks reach directly, bypassing gateways.</param>
/// <param name="Location">Where the element is.</param>
public sealed record DomainDefinition(string Name, string? Gateway, ImmutableArray<string> Reachable, SourceLocation Location);

/// <summary>A node with an agent that launches ranks.</summary>
/// <param name="Name">Unique node name.</param>
/// <param name="Agent">The agent's host:port as written.</param>
/// <param name="Domain">
/// The node's domain: as written, or the single declared domain when omitted; null when no domain is declared.
/// </param>
/// <param name="Slots">Ranks the node takes before it is oversubscribed. Defaults to 1 in the file.</param>
/// <param name="Location">Where the element is.</param>
public sealed record NodeDefinition(string Name, string Agent, string? Domain, int Slots, SourceLocation Location);

/// <summary>A group of ranks running one program: one "app" of an MPMD launch.</summary>
/// <param name="Index">Position among the computation's groups, from 0; what MPI_COMM_WORLD's MPI_APPNUM attribute holds.</param>
/// <param name="Program">The program path as written in the file.</param>
/// <param name="ProgramPath">
/// The program's full path, resolved against the computation file's directory; as written when it is a path of the
/// other system, for a node of that system (see computation.xsd).
/// </param>
/// <param name="Count">Number of ranks, at least 1.</param>
/// <param name="Arguments">Command-line arguments, the same for every rank of the group.</param>
/// <param name="Node">The node every rank of the group is pinned to, or null to let placement choose.</param>
/// <param name="WorkingDirectory">
/// Full path of the ranks' working directory (group, else computation, else file directory); empty for a program of
/// the other system without one, which its node's agent runs in the program's directory.
/// </param>
/// <param name="Environment">
/// Effective environment variables: the computation's, overridden by the group's. Sorted by name so launches are
/// reproducible.
/// </param>
/// <param name="Location">Where the element is.</param>
public sealed record RanksDefinition(
    int Index,
    string Program,
    string ProgramPath,
    int Count,
    ImmutableArray<string> Arguments,
    string? Node,
    string WorkingDirectory,
    ImmutableSortedDictionary<string, string> Environment,
    SourceLocation Location)
{
    /// <summary>
    /// Whether the program's directory is shipped to the nodes that run it (<c>stage="true"</c>, or <c>pmpi run
    /// --stage</c> for every group): the ranks then run the agent's copy, in its directory unless
    /// <see cref="WorkingDirectory"/> is set. Defaults to false: the program is already on every node at its path.
    /// </summary>
    public bool Stage { get; init; }
}

/// <summary>A position in a computation file, 1-based as editors show it.</summary>
/// <param name="File">The file name as the user gave it.</param>
/// <param name="Line">Line, from 1; 0 when unknown.</param>
/// <param name="Column">Column, from 1; 0 when unknown.</param>
public readonly record struct SourceLocation(string File, int Line, int Column)
{
    /// <summary>Formats as <c>file(line,column)</c>, the form compilers use so editors and CI logs link to it.</summary>
    public override string ToString() => $"{File}({Line},{Column})";
}

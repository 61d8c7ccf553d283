using System.Collections.Immutable;
using Pmpi.Matching;
using Pmpi.Rpc.Routing;

namespace Pmpi.Devices;

/// <summary>
/// The message-moving side of one rank: where its messages are matched and its link to every rank of the job.
/// All MPI semantics live above it; job control (registering, aborting) does not go through it.
/// </summary>
internal interface IDevice : IDisposable
{
    /// <summary>This rank in the job: its rank in its world plus <see cref="WorldFirst"/>.</summary>
    int Rank { get; }

    /// <summary>Number of ranks in this rank's world.</summary>
    int Size { get; }

    /// <summary>The job rank of its world's rank 0: 0, except in a world that ranks of the job spawned.</summary>
    int WorldFirst { get; }

    /// <summary>Where messages for this rank are matched.</summary>
    MatchingEngine Engine { get; }

    /// <summary>A name for the node this rank runs on (MPI_Get_processor_name).</summary>
    string ProcessorName { get; }

    /// <summary>The link to each job rank, this one's own included, indexed by job rank.</summary>
    ImmutableArray<ILink> Links { get; }

    /// <summary>Where each job rank runs (node and domain), indexed by job rank: what topology-aware collectives group by.</summary>
    ImmutableArray<RankPlace> Places { get; }
}

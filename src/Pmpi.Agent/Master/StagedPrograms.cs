using Google.Protobuf;
using Google.Protobuf.Collections;
using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Agent.Computation;
using Pmpi.Agent.Staging;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Master;

/// <summary>
/// A job's staged programs (<c>pmpi run --stage</c>, <c>stage="true"</c>): the program directories its submitter
/// uploaded to this master's agent, checked when the job is submitted, allowed by its ticket (by digest), and
/// shipped from this master's store to each agent before that agent's launch.
/// </summary>
internal sealed class StagedPrograms
{
    private readonly Dictionary<int, Program> _byGroup;
    private readonly ProgramCache _store;

    private StagedPrograms(Dictionary<int, Program> byGroup, ProgramCache store) => (_byGroup, _store) = (byGroup, store);

    /// <summary>The digests of every staged program: what the job's ticket allows its launches to stage.</summary>
    public IEnumerable<ByteString> Digests => _byGroup.Values.Select(program => program.Digest).Distinct();

    /// <summary>
    /// Checks what a submission ships: a program for each group that asks to be staged and for no other, each well
    /// formed, holding its group's program, and already uploaded to <paramref name="store"/> in full.
    /// </summary>
    /// <exception cref="RpcException">INVALID_ARGUMENT or FAILED_PRECONDITION, naming the group's place in the computation file.</exception>
    public static StagedPrograms Check(ComputationDefinition computation, MapField<int, StagedProgram> shipped, ProgramCache store)
    {
        var byGroup = new Dictionary<int, Program>();
        foreach (var (index, manifest) in shipped)
        {
            if ((uint)index >= (uint)computation.Ranks.Length)
                throw Refused(StatusCode.InvalidArgument, computation.Location, $"the submission ships a program for <ranks> group {index}, but the computation has {computation.Ranks.Length}");
            var group = computation.Ranks[index];
            if (ProgramManifest.Problem(manifest) is { } problem)
                throw Refused(StatusCode.InvalidArgument, group.Location, $"the staged directory of program '{group.Program}' is malformed: {problem}");
            var program = new Program(manifest, ByteString.CopyFrom(ProgramManifest.Digest(manifest)), Path.GetDirectoryName(group.ProgramPath)!);
            if (program.FileOf(group.ProgramPath) is null)
                throw Refused(StatusCode.InvalidArgument, group.Location, $"the staged directory of program '{group.Program}' does not hold '{Path.GetFileName(group.ProgramPath)}'");
            if (store.Missing(manifest) is { Count: > 0 } missing)
                throw Refused(StatusCode.FailedPrecondition, group.Location, $"{missing.Count} files of the staged directory of program '{group.Program}' were not uploaded to this master before the submission (pmpi run uploads them)");
            byGroup[index] = program;
        }
        if (computation.Ranks.FirstOrDefault(group => group.Stage && !byGroup.ContainsKey(group.Index)) is { } unshipped)
            throw Refused(StatusCode.InvalidArgument, unshipped.Location, $"program '{unshipped.Program}' is to be staged (stage=\"true\"), but the submission ships no files for it: submit with pmpi run, which uploads them");
        return new StagedPrograms(byGroup, store);
    }

    /// <summary>The staged program a group's ranks run, or null when they run the program at its path.</summary>
    public Program? Of(RanksDefinition group) => _byGroup.GetValueOrDefault(group.Index);

    /// <summary>Uploads to the agent behind <paramref name="agent"/> the files of <paramref name="programs"/> it lacks, from this master's store.</summary>
    /// <exception cref="RpcException">The agent refused a file or could not be reached.</exception>
    public async Task ShipAsync(GrpcChannel agent, IEnumerable<Program> programs, CancellationToken cancellationToken)
    {
        var client = new Rpc.V1.Agent.AgentClient(agent);
        foreach (var program in programs.Distinct())
            await ProgramUpload.ShipAsync(client, program.Manifest, OpenStored, cancellationToken).ConfigureAwait(false);
    }

    /// <summary>This master's copy of a staged file, to upload; a copy gone from its store fails the launch saying so.</summary>
    private Stream OpenStored(ByteString sha256)
    {
        try
        {
            return _store.Open(sha256.Span);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new RpcException(new Status(StatusCode.FailedPrecondition, $"this master's copy of staged file {Convert.ToHexStringLower(sha256.Span)} could not be read: {e.Message}"));
        }
    }

    private static RpcException Refused(StatusCode code, SourceLocation location, string message) =>
        new(new Status(code, new ComputationFileException([new ComputationFileError(location, message)]).Message));

    /// <summary>A staged program: its files, its digest, and the directory it was shipped from (the submitter's).</summary>
    public sealed record Program(StagedProgram Manifest, ByteString Digest, string Directory)
    {
        /// <summary>The path among the program's files (with '/') of <paramref name="programPath"/>, a path in <see cref="Directory"/>; null when it is not one of them.</summary>
        public string? FileOf(string programPath)
        {
            var relative = System.IO.Path.GetRelativePath(Directory, programPath).Replace(System.IO.Path.DirectorySeparatorChar, '/');
            return Manifest.Files.Any(file => file.Path == relative) ? relative : null;
        }

        /// <summary>
        /// The path in <see cref="Directory"/> of the file an agent's copy of this program has at <paramref name="copyPath"/>
        /// (its store's <c>programs/&lt;digest&gt;/</c>, where a staged rank runs); null when it is not one of the program's files.
        /// </summary>
        public string? SubmittedPathOf(string copyPath)
        {
            var parts = copyPath.Split(['/', '\\']);
            int digest = Array.LastIndexOf(parts, Convert.ToHexStringLower(Digest.Span));
            if (digest < 0) return null;
            var submitted = System.IO.Path.Combine([Directory, .. parts[(digest + 1)..]]);
            return FileOf(submitted) is null ? null : submitted;
        }
    }
}

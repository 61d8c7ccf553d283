using Google.Protobuf;
using Grpc.Core;
using Grpc.Net.Client;
using Pmpi.Agent.Computation;
using Pmpi.Rpc.Client;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Cli;

/// <summary>
/// `pmpi run --stage` and <c>stage="true"</c>: the directory of each staged group's program, as this machine has it,
/// uploaded to the master's agent (the embedded one, or --master's) and named in the submission, from where the
/// master ships it to the agents that run it.
/// </summary>
internal static class ProgramStaging
{
    /// <summary>
    /// Uploads the staged programs of <paramref name="request"/>'s computation (every group's when
    /// <paramref name="stageAll"/>) through <paramref name="master"/> and adds their manifests to the request.
    /// </summary>
    /// <returns>Null, or what stopped it, naming the group's place in the computation file.</returns>
    public static async Task<string?> ShipAsync(SubmitRequest request, bool stageAll, GrpcChannel master, Uri masterAddress, CancellationToken cancellationToken)
    {
        ComputationDefinition computation;
        try
        {
            computation = ComputationFile.Parse(request.ComputationXml, request.FileName);
        }
        catch (ComputationFileException)
        {
            // The master refuses it with the same errors, in the order it reports them.
            return null;
        }
        var agent = new Rpc.V1.Agent.AgentClient(master);
        var manifests = new Dictionary<string, StagedProgram>(StringComparer.Ordinal);
        foreach (var group in computation.Ranks.Where(group => stageAll || group.Stage))
        {
            var directory = Path.GetDirectoryName(group.ProgramPath)!;
            try
            {
                if (!manifests.TryGetValue(directory, out var manifest))
                {
                    manifests[directory] = manifest = ProgramManifest.Of(directory);
                    var paths = new Dictionary<ByteString, string>();
                    foreach (var file in manifest.Files) paths.TryAdd(file.Sha256, file.Path);
                    await ProgramUpload.ShipAsync(agent, manifest, sha256 => File.OpenRead(Path.Combine(directory, paths[sha256])), cancellationToken).ConfigureAwait(false);
                }
                request.Staged[group.Index] = manifest;
            }
            catch (Exception e) when (e is IOException or UnauthorizedAccessException)
            {
                return $"{group.Location}: error: cannot stage program '{group.Program}': {e.Message}";
            }
            catch (RpcException e) when (e.StatusCode != StatusCode.Cancelled)
            {
                return $"{group.Location}: error: staging program '{group.Program}' failed: {RpcFailures.Describe(e, masterAddress)}";
            }
        }
        return null;
    }
}

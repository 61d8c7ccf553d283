using Google.Protobuf;
using Grpc.Core;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Staging;

/// <summary>
/// Ships a staged program to an agent's store: asks which of its files the agent lacks (Agent.MissingFiles), then
/// uploads each of those (Agent.Upload), so a file any earlier job shipped there crosses the network no more.
/// The submitter ships to its master's agent, and the master from that store to each agent that runs the program.
/// </summary>
public static class ProgramUpload
{
    /// <summary>The bytes of a file one upload message carries: well under an agent's request limit.</summary>
    public const int ChunkSize = 1024 * 1024;

    /// <summary>
    /// Uploads the files of <paramref name="manifest"/> that <paramref name="agent"/> lacks, each read from what
    /// <paramref name="open"/> opens for its SHA-256.
    /// </summary>
    /// <returns>How many files were uploaded, and their bytes.</returns>
    /// <exception cref="RpcException">The agent refused the program or a file (the status says why) or could not be reached.</exception>
    public static async Task<(int Files, long Bytes)> ShipAsync(Agent.AgentClient agent, StagedProgram manifest, Func<ByteString, Stream> open, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(agent);
        ArgumentNullException.ThrowIfNull(manifest);
        ArgumentNullException.ThrowIfNull(open);
        var missing = await agent.MissingFilesAsync(manifest, cancellationToken: cancellationToken).ResponseAsync.ConfigureAwait(false);
        var sizes = new Dictionary<ByteString, long>();
        foreach (var file in manifest.Files) sizes.TryAdd(file.Sha256, file.Size);
        long bytes = 0;
        var buffer = new byte[ChunkSize];
        foreach (var sha256 in missing.Sha256)
        {
            if (!sizes.TryGetValue(sha256, out long size))
                throw new RpcException(new Status(StatusCode.Internal, $"the agent asked for file {Convert.ToHexStringLower(sha256.Span)}, which the staged program does not have"));
            using var call = agent.Upload(cancellationToken: cancellationToken);
            await using (var content = open(sha256))
            {
                // The first chunk names the file, and is sent even for an empty one.
                var chunk = new FileChunk { Sha256 = sha256, Size = size };
                bool first = true;
                int read;
                while ((read = await content.ReadAsync(buffer, cancellationToken).ConfigureAwait(false)) > 0 || first)
                {
                    chunk.Data = ByteString.CopyFrom(buffer, 0, read);
                    try
                    {
                        await call.RequestStream.WriteAsync(chunk, cancellationToken).ConfigureAwait(false);
                    }
                    catch (Exception e) when (e is IOException or InvalidOperationException)
                    {
                        // The agent ended the call (a refusal, or it went away): its status says why.
                        await call.ResponseAsync.ConfigureAwait(false);
                        throw;
                    }
                    (chunk, first) = (new FileChunk(), false);
                }
            }
            await call.RequestStream.CompleteAsync().ConfigureAwait(false);
            await call.ResponseAsync.ConfigureAwait(false);
            bytes += size;
        }
        return (missing.Sha256.Count, bytes);
    }
}

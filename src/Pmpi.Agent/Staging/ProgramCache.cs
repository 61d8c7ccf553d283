using System.Security.Cryptography;
using Google.Protobuf;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Staging;

/// <summary>
/// An agent's store of staged programs (<c>pmpi run --stage</c>). Each file is kept once, under its SHA-256
/// (<c>files/</c>), and only after its bytes were checked against that hash, so what a job ships twice, or two jobs
/// share, crosses the network once. A launch gets its program's directory (<c>programs/&lt;digest&gt;/</c>) made from
/// those files; what no launch has used for <see cref="KeepUnused"/> is removed. Everything in it is the agent
/// user's alone (directories 0700), like the ranks it launches.
/// </summary>
internal sealed class ProgramCache
{
    private const UnixFileMode OwnerOnlyDirectory = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;
    private const UnixFileMode OwnerReadable = UnixFileMode.UserRead | UnixFileMode.UserWrite;

    private readonly string _files;
    private readonly string _programs;

    /// <summary>The most bytes one staged file may have: an upload is written to disk as it arrives, so this bounds the disk, not memory.</summary>
    public const long MaxFileSize = 4L << 30;

    /// <param name="root">Where the store lives; created (0700) when a file is first kept.</param>
    /// <param name="keepUnused">How long a file or program no launch used stays.</param>
    public ProgramCache(string root, TimeSpan keepUnused)
    {
        ArgumentNullException.ThrowIfNull(root);
        Root = Path.GetFullPath(root);
        KeepUnused = keepUnused;
        _files = Path.Combine(Root, "files");
        _programs = Path.Combine(Root, "programs");
    }

    /// <summary>Where the store lives.</summary>
    public string Root { get; }

    /// <summary>How long what no launch used stays.</summary>
    public TimeSpan KeepUnused { get; }

    /// <summary>
    /// The hashes of <paramref name="manifest"/>'s files that this store does not have, each once. Those it has are
    /// marked used, so a cleaning between this answer and the launch does not remove them.
    /// </summary>
    public IReadOnlyList<ByteString> Missing(StagedProgram manifest)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        var missing = new List<ByteString>();
        foreach (var sha256 in manifest.Files.Select(file => file.Sha256).Distinct())
        {
            var path = FilePath(sha256.Span);
            try
            {
                File.SetLastWriteTimeUtc(path, DateTime.UtcNow);
            }
            catch (IOException e) when (e is FileNotFoundException or DirectoryNotFoundException)
            {
                missing.Add(sha256);
            }
        }
        return missing;
    }

    /// <summary>
    /// Keeps <paramref name="content"/> (the file's bytes, in the pieces they arrive in) as the file whose SHA-256 is
    /// <paramref name="sha256"/>, once its bytes are seen to be exactly <paramref name="size"/> long and to hash to it;
    /// else nothing is kept.
    /// </summary>
    /// <exception cref="InvalidDataException">The bytes are not the ones named, or too many: the message says how.</exception>
    public async Task AddAsync(ReadOnlyMemory<byte> sha256, long size, IAsyncEnumerable<ReadOnlyMemory<byte>> content, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(content);
        if (sha256.Length != SHA256.HashSizeInBytes) throw new InvalidDataException($"a file's hash has {sha256.Length} bytes, not {SHA256.HashSizeInBytes}");
        if (size is < 0 or > MaxFileSize) throw new InvalidDataException($"file {Convert.ToHexStringLower(sha256.Span)} states {size} bytes; a staged file has 0 to {MaxFileSize}");
        CreateOwnerOnly(Root);
        CreateOwnerOnly(_files);
        var target = FilePath(sha256.Span);
        var partial = $"{target}.{Guid.NewGuid():N}.partial";
        try
        {
            long written = 0;
            using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
            var create = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write, Options = FileOptions.Asynchronous };
            if (!OperatingSystem.IsWindows()) create.UnixCreateMode = OwnerReadable;
            await using (var output = new FileStream(partial, create))
            {
                await foreach (var piece in content.WithCancellation(cancellationToken).ConfigureAwait(false))
                {
                    written += piece.Length;
                    if (written > size) throw new InvalidDataException($"file {Convert.ToHexStringLower(sha256.Span)} sent more than its {size} bytes");
                    hash.AppendData(piece.Span);
                    await output.WriteAsync(piece, cancellationToken).ConfigureAwait(false);
                }
            }
            if (written != size) throw new InvalidDataException($"file {Convert.ToHexStringLower(sha256.Span)} ended after {written} of its {size} bytes");
            var actual = hash.GetHashAndReset();
            if (!CryptographicOperations.FixedTimeEquals(actual, sha256.Span))
                throw new InvalidDataException($"file {Convert.ToHexStringLower(sha256.Span)} has other bytes (their SHA-256 is {Convert.ToHexStringLower(actual)}): it was changed on the way, or is not the file named");
            // Another upload of the same bytes may have landed first; either copy is the file.
            File.Move(partial, target, overwrite: true);
        }
        finally
        {
            File.Delete(partial);
        }
    }

    /// <summary>
    /// The directory holding <paramref name="manifest"/>'s files at their paths, made from the store (each file
    /// checked against its hash once more, so a store altered on disk is not run) unless it exists; marked used now.
    /// </summary>
    /// <exception cref="InvalidDataException">The manifest is malformed, or a file is missing or altered: the message names it.</exception>
    public string Materialize(StagedProgram manifest)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        if (ProgramManifest.Problem(manifest) is { } problem) throw new InvalidDataException($"the staged program is malformed: {problem}");
        var directory = Path.Combine(_programs, Convert.ToHexStringLower(ProgramManifest.Digest(manifest)));
        if (!Directory.Exists(directory))
        {
            CreateOwnerOnly(Root);
            CreateOwnerOnly(_programs);
            var building = $"{directory}.{Guid.NewGuid():N}.partial";
            try
            {
                CreateOwnerOnly(building);
                foreach (var file in manifest.Files) Place(file, building);
                Directory.Move(building, directory);
            }
            catch (IOException) when (Directory.Exists(directory))
            {
                // Another launch made the same program meanwhile: the same files.
            }
            finally
            {
                if (Directory.Exists(building)) Directory.Delete(building, recursive: true);
            }
        }
        MarkUsed(directory);
        foreach (var file in manifest.Files) MarkUsed(FilePath(file.Sha256.Span));
        return directory;
    }

    /// <summary>Removes the files and programs no launch has used for <see cref="KeepUnused"/> before <paramref name="now"/>, except <paramref name="inUse"/> (program directories of running launches).</summary>
    /// <returns>How many files and program directories were removed.</returns>
    public int Clean(DateTime now, IReadOnlySet<string> inUse)
    {
        ArgumentNullException.ThrowIfNull(inUse);
        var before = now - KeepUnused;
        int removed = 0;
        foreach (var program in Directory.Exists(_programs) ? Directory.EnumerateDirectories(_programs) : [])
        {
            if (inUse.Contains(program) || Directory.GetLastWriteTimeUtc(program) >= before) continue;
            Directory.Delete(program, recursive: true);
            removed++;
        }
        foreach (var file in Directory.Exists(_files) ? Directory.EnumerateFiles(_files) : [])
        {
            if (File.GetLastWriteTimeUtc(file) >= before) continue;
            File.Delete(file);
            removed++;
        }
        return removed;
    }

    /// <summary>Opens the kept file whose SHA-256 is <paramref name="sha256"/>, to upload it on (a master ships what its submitter uploaded).</summary>
    /// <exception cref="FileNotFoundException">This store does not have it.</exception>
    public Stream Open(ReadOnlySpan<byte> sha256) =>
        new FileStream(FilePath(sha256), FileMode.Open, FileAccess.Read, FileShare.Read, bufferSize: 0, FileOptions.Asynchronous);

    private string FilePath(ReadOnlySpan<byte> sha256) => Path.Combine(_files, Convert.ToHexStringLower(sha256));

    private void Place(StagedFile file, string directory)
    {
        var source = FilePath(file.Sha256.Span);
        if (!File.Exists(source)) throw new InvalidDataException($"staged file '{file.Path}' ({Convert.ToHexStringLower(file.Sha256.Span)}) was never sent to this agent");
        var target = Path.Combine(directory, file.Path.Replace('/', Path.DirectorySeparatorChar));
        CreateOwnerOnly(Path.GetDirectoryName(target)!);
        File.Copy(source, target);
        using (var copied = File.OpenRead(target))
        {
            if (copied.Length != file.Size || !CryptographicOperations.FixedTimeEquals(SHA256.HashData(copied), file.Sha256.Span))
                throw new InvalidDataException($"staged file '{file.Path}' is altered in this agent's store ({source}): it is not the file the job shipped");
        }
        if (!OperatingSystem.IsWindows()) File.SetUnixFileMode(target, file.Executable ? OwnerOnlyDirectory : OwnerReadable);
    }

    private static void MarkUsed(string path)
    {
        if (Directory.Exists(path)) Directory.SetLastWriteTimeUtc(path, DateTime.UtcNow);
        else File.SetLastWriteTimeUtc(path, DateTime.UtcNow);
    }

    private static void CreateOwnerOnly(string directory)
    {
        if (OperatingSystem.IsWindows()) Directory.CreateDirectory(directory);
        else Directory.CreateDirectory(directory, OwnerOnlyDirectory);
    }
}

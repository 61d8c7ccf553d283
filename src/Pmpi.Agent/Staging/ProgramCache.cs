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

    /// <param name="root">Where the store lives; created (0700) when missing.</param>
    /// <param name="keepUnused">How long a file or program no launch used stays.</param>
    public ProgramCache(string root, TimeSpan keepUnused)
    {
        ArgumentNullException.ThrowIfNull(root);
        Root = Path.GetFullPath(root);
        KeepUnused = keepUnused;
        _files = Path.Combine(Root, "files");
        _programs = Path.Combine(Root, "programs");
        foreach (var directory in new[] { Root, _files, _programs }) CreateOwnerOnly(directory);
    }

    /// <summary>Where the store lives.</summary>
    public string Root { get; }

    /// <summary>How long what no launch used stays.</summary>
    public TimeSpan KeepUnused { get; }

    /// <summary>The hashes of <paramref name="manifest"/>'s files that this store does not have, each once.</summary>
    public IReadOnlyList<ByteString> Missing(StagedProgram manifest)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        return [.. manifest.Files.Select(file => file.Sha256).Distinct().Where(sha256 => !File.Exists(FilePath(sha256.Span)))];
    }

    /// <summary>
    /// Keeps <paramref name="content"/> as the file whose SHA-256 is <paramref name="sha256"/>, once its bytes are
    /// seen to be exactly <paramref name="size"/> long and to hash to it; else nothing is kept.
    /// </summary>
    /// <exception cref="InvalidDataException">The bytes are not the ones named: the message says how.</exception>
    public async Task AddAsync(ReadOnlyMemory<byte> sha256, long size, Stream content, CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(content);
        if (sha256.Length != SHA256.HashSizeInBytes) throw new InvalidDataException($"a file's hash has {sha256.Length} bytes, not {SHA256.HashSizeInBytes}");
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
                var buffer = new byte[81920];
                int read;
                while ((read = await content.ReadAsync(buffer, cancellationToken).ConfigureAwait(false)) > 0)
                {
                    written += read;
                    if (written > size) throw new InvalidDataException($"file {Convert.ToHexStringLower(sha256.Span)} sent more than its {size} bytes");
                    hash.AppendData(buffer, 0, read);
                    await output.WriteAsync(buffer.AsMemory(0, read), cancellationToken).ConfigureAwait(false);
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
        foreach (var program in Directory.EnumerateDirectories(_programs))
        {
            if (inUse.Contains(program) || Directory.GetLastWriteTimeUtc(program) >= before) continue;
            Directory.Delete(program, recursive: true);
            removed++;
        }
        foreach (var file in Directory.EnumerateFiles(_files))
        {
            if (File.GetLastWriteTimeUtc(file) >= before) continue;
            File.Delete(file);
            removed++;
        }
        return removed;
    }

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

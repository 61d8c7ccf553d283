using System.Collections.Concurrent;
using System.Security.Cryptography;
using Google.Protobuf;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Staging;

/// <summary>
/// An agent's store of staged programs (<c>pmpi run --stage</c>). Each file is kept once, under its SHA-256
/// (<c>files/</c>), and only after its bytes were checked against that hash, so what a job ships twice, or two jobs
/// share, crosses the network once. A launch gets its program's directory (<c>programs/&lt;digest&gt;/</c>) made from
/// those files, hard links to them where the file system has them (copies elsewhere); what no launch has used for
/// <see cref="KeepUnused"/> is removed, and the files never take more than <see cref="Limit"/> bytes: to make room
/// for new ones the least recently used go first, and none that a running launch's program holds. Everything in it is
/// the agent user's alone (directories 0700, files read-only), like the ranks it launches.
/// </summary>
internal sealed class ProgramCache
{
    private const UnixFileMode OwnerOnlyDirectory = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;
    private const UnixFileMode OwnerReadable = UnixFileMode.UserRead | UnixFileMode.UserWrite;
    private const UnixFileMode OwnerReadOnly = UnixFileMode.UserRead;
    private const UnixFileMode OwnerExecutable = UnixFileMode.UserRead | UnixFileMode.UserExecute;

    private readonly string _files;
    private readonly string _programs;
    // The hashes of each program directory's files, for the programs made since this agent started: all a running
    // launch can be using, since ranks do not outlive their agent.
    private readonly ConcurrentDictionary<string, ByteString[]> _programFiles = new(StringComparer.Ordinal);
    private readonly Lock _room = new();
    private long _arriving; // bytes of uploads being written, counted before they are kept

    /// <summary>The most bytes one staged file may have: an upload is written to disk as it arrives, so this bounds the disk, not memory.</summary>
    public const long MaxFileSize = 4L << 30;

    /// <param name="root">Where the store lives; created (0700) when a file is first kept.</param>
    /// <param name="keepUnused">How long a file or program no launch used stays.</param>
    /// <param name="limit">The most bytes the kept files may take.</param>
    public ProgramCache(string root, TimeSpan keepUnused, long limit)
    {
        ArgumentNullException.ThrowIfNull(root);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(limit);
        Root = Path.GetFullPath(root);
        KeepUnused = keepUnused;
        Limit = limit;
        _files = Path.Combine(Root, "files");
        _programs = Path.Combine(Root, "programs");
    }

    /// <summary>Where the store lives.</summary>
    public string Root { get; }

    /// <summary>How long what no launch used stays.</summary>
    public TimeSpan KeepUnused { get; }

    /// <summary>The most bytes the kept files may take (the program directories, links to them, take none of their own).</summary>
    public long Limit { get; }

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
    /// Makes room for the files of <paramref name="manifest"/> that are <paramref name="missing"/>, before they are
    /// uploaded, so that a program that cannot fit is refused before its first byte, keeping its files that are here.
    /// </summary>
    /// <param name="manifest">The program to be shipped.</param>
    /// <param name="missing">Its files this store lacks (<see cref="Missing"/>).</param>
    /// <param name="inUse">The program directories of running launches, whose files stay.</param>
    /// <exception cref="StagingFullException">The missing files do not fit beside the files running launches hold.</exception>
    public void MakeRoomFor(StagedProgram manifest, IReadOnlyCollection<ByteString> missing, IReadOnlySet<string> inUse)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        ArgumentNullException.ThrowIfNull(missing);
        var needed = manifest.Files.Where(file => missing.Contains(file.Sha256)).DistinctBy(file => file.Sha256).Sum(file => file.Size);
        lock (_room) MakeRoom(needed, inUse, manifest.Files.Select(file => file.Sha256).ToHashSet());
    }

    /// <summary>
    /// Keeps <paramref name="content"/> (the file's bytes, in the pieces they arrive in) as the file whose SHA-256 is
    /// <paramref name="sha256"/>, once its bytes are seen to be exactly <paramref name="size"/> long and to hash to it;
    /// else nothing is kept.
    /// </summary>
    /// <param name="sha256">The file's SHA-256.</param>
    /// <param name="size">Its length in bytes.</param>
    /// <param name="content">Its bytes, in the pieces they arrive in.</param>
    /// <param name="inUse">The program directories of running launches, whose files stay when room is made.</param>
    /// <param name="cancellationToken">Abandons the upload; nothing is kept.</param>
    /// <exception cref="InvalidDataException">The bytes are not the ones named, or too many: the message says how.</exception>
    /// <exception cref="StagingFullException">The file does not fit beside the files running launches hold.</exception>
    public async Task AddAsync(ReadOnlyMemory<byte> sha256, long size, IAsyncEnumerable<ReadOnlyMemory<byte>> content, IReadOnlySet<string> inUse,
        CancellationToken cancellationToken)
    {
        ArgumentNullException.ThrowIfNull(content);
        ArgumentNullException.ThrowIfNull(inUse);
        if (sha256.Length != SHA256.HashSizeInBytes) throw new InvalidDataException($"a file's hash has {sha256.Length} bytes, not {SHA256.HashSizeInBytes}");
        if (size is < 0 or > MaxFileSize) throw new InvalidDataException($"file {Convert.ToHexStringLower(sha256.Span)} states {size} bytes; a staged file has 0 to {MaxFileSize}");
        lock (_room)
        {
            MakeRoom(size, inUse, new HashSet<ByteString> { ByteString.CopyFrom(sha256.Span) });
            _arriving += size;
        }
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
            // Read-only from now on: a program directory links the same bytes, which its ranks must not change.
            if (!OperatingSystem.IsWindows()) File.SetUnixFileMode(partial, OwnerReadOnly);
            // Another upload of the same bytes may have landed first; either copy is the file.
            File.Move(partial, target, overwrite: true);
        }
        finally
        {
            lock (_room) _arriving -= size;
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
        _programFiles[directory] = [.. manifest.Files.Select(file => file.Sha256).Distinct()];
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
            RemoveProgram(program);
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
        if (!FileLinks.TryCreateHardLink(source, target)) File.Copy(source, target);
        using (var placed = File.OpenRead(target))
        {
            if (placed.Length != file.Size || !CryptographicOperations.FixedTimeEquals(SHA256.HashData(placed), file.Sha256.Span))
                throw new InvalidDataException($"staged file '{file.Path}' is altered in this agent's store ({source}): it is not the file the job shipped");
        }
        // A link shares its mode with the store's file and every program linking it: executable once any needs it.
        if (!OperatingSystem.IsWindows() && file.Executable) File.SetUnixFileMode(target, OwnerExecutable);
    }

    /// <summary>
    /// Removes what it takes for <paramref name="needed"/> more bytes to fit under <see cref="Limit"/> beside what is kept
    /// and arriving: first every program directory no launch is running (links the next launch makes again, which
    /// would keep the bytes of removed files on disk), then the least recently used files, none that a running launch's
    /// program or <paramref name="keep"/> holds. Called under <see cref="_room"/>.
    /// </summary>
    /// <exception cref="StagingFullException">Even then the bytes do not fit; nothing more is removed than was.</exception>
    private void MakeRoom(long needed, IReadOnlySet<string> inUse, IReadOnlySet<ByteString> keep)
    {
        var files = Directory.Exists(_files)
            ? new DirectoryInfo(_files).EnumerateFiles().Where(file => !file.Name.EndsWith(".partial", StringComparison.Ordinal)).ToList()
            : [];
        long used = files.Sum(file => file.Length) + _arriving;
        if (used + needed <= Limit) return;
        foreach (var program in Directory.Exists(_programs) ? Directory.EnumerateDirectories(_programs) : [])
        {
            if (!inUse.Contains(program) && !program.EndsWith(".partial", StringComparison.Ordinal)) RemoveProgram(program);
        }
        var held = inUse.SelectMany(program => _programFiles.GetValueOrDefault(program, [])).Select(sha256 => Convert.ToHexStringLower(sha256.Span))
            .Concat(keep.Select(sha256 => Convert.ToHexStringLower(sha256.Span))).ToHashSet(StringComparer.Ordinal);
        foreach (var file in files.Where(file => !held.Contains(file.Name)).OrderBy(file => file.LastWriteTimeUtc))
        {
            if (used + needed <= Limit) return;
            long length = file.Length;
            file.Delete();
            used -= length;
        }
        if (used + needed > Limit)
        {
            throw new StagingFullException($"staging needs {Bytes(needed)} more, but this agent keeps at most {Bytes(Limit)} of staged files (pmpi agent --staging-limit) "
                + $"and {Bytes(used)} of them are held by running jobs or arriving uploads ({Root})");
        }
    }

    private void RemoveProgram(string program)
    {
        Directory.Delete(program, recursive: true);
        _programFiles.TryRemove(program, out _);
    }

    private static string Bytes(long count) => count switch
    {
        >= 1L << 30 => $"{count / (double)(1L << 30):0.##} GiB",
        >= 1L << 20 => $"{count / (double)(1L << 20):0.##} MiB",
        _ => $"{count:N0} bytes",
    };

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

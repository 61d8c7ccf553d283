using System.Security.Cryptography;
using System.Text;
using Google.Protobuf;
using Pmpi.Agent.Staging;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Tests.Staging;

/// <summary>
/// An agent's store of staged programs: files kept by hash once checked, programs made from them as links, the unused
/// removed, and the files kept under a limit.
/// </summary>
public sealed class ProgramCacheTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private static readonly HashSet<string> NoneRunning = [];
    private readonly DirectoryInfo _root = Directory.CreateTempSubdirectory("pmpi-cache-");

    public void Dispose() => _root.Delete(recursive: true);

    private ProgramCache Cache(long limit = 1L << 30) => new(Path.Combine(_root.FullName, "store"), TimeSpan.FromDays(7), limit);

    private static (StagedProgram Manifest, Dictionary<string, byte[]> Contents) Program(params (string Path, string Text, bool Executable)[] files)
    {
        var manifest = new StagedProgram();
        var contents = new Dictionary<string, byte[]>();
        foreach (var (path, text, executable) in files.OrderBy(file => file.Path, StringComparer.Ordinal))
        {
            var bytes = Encoding.UTF8.GetBytes(text);
            manifest.Files.Add(new StagedFile { Path = path, Sha256 = ByteString.CopyFrom(SHA256.HashData(bytes)), Size = bytes.Length, Executable = executable });
            contents[path] = bytes;
        }
        return (manifest, contents);
    }

    /// <summary>Bytes as an upload brings them: in pieces, here two.</summary>
    private static async IAsyncEnumerable<ReadOnlyMemory<byte>> Pieces(byte[] bytes)
    {
        await Task.Yield();
        yield return bytes.AsMemory(0, bytes.Length / 2);
        yield return bytes.AsMemory(bytes.Length / 2);
    }

    private static async Task SendAllAsync(ProgramCache cache, StagedProgram manifest, Dictionary<string, byte[]> contents, IReadOnlySet<string>? running = null)
    {
        foreach (var file in manifest.Files)
            await cache.AddAsync(file.Sha256.Memory, file.Size, Pieces(contents[file.Path]), running ?? NoneRunning, CancellationToken.None).WaitAsync(Timeout);
    }

    private static string StoredFile(ProgramCache cache, StagedFile file) => Path.Combine(cache.Root, "files", Convert.ToHexStringLower(file.Sha256.Span));

    [Fact]
    public async Task AddThenMaterialize_ProgramDirectoryHoldsEveryFileAtItsPath()
    {
        var cache = Cache();
        var (manifest, contents) = Program(("app.dll", "assembly", false), ("bin/run.sh", "#!/bin/sh\necho hi\n", true), ("same.txt", "assembly", false));
        Assert.Equal(2, cache.Missing(manifest).Count); // two distinct contents

        await SendAllAsync(cache, manifest, contents);
        var directory = cache.Materialize(manifest);

        Assert.Empty(cache.Missing(manifest));
        Assert.Equal(Convert.ToHexStringLower(ProgramManifest.Digest(manifest)), Path.GetFileName(directory));
        foreach (var (path, bytes) in contents) Assert.Equal(bytes, File.ReadAllBytes(Path.Combine(directory, path)));
        if (!OperatingSystem.IsWindows())
        {
            Assert.True((File.GetUnixFileMode(Path.Combine(directory, "bin/run.sh")) & UnixFileMode.UserExecute) != 0);
            Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(cache.Root));
        }
        Assert.Equal(directory, cache.Materialize(manifest)); // made once, found after
    }

    [Fact]
    public async Task AddAsync_TamperedBytes_RefusedNamingBothHashesAndNothingKept()
    {
        var cache = Cache();
        var (manifest, _) = Program(("app.dll", "assembly", false));
        var file = manifest.Files[0];

        var error = await Assert.ThrowsAsync<InvalidDataException>(() =>
            cache.AddAsync(file.Sha256.Memory, file.Size, Pieces("assemblX"u8.ToArray()), NoneRunning, CancellationToken.None)).WaitAsync(Timeout);

        Assert.Contains(Convert.ToHexStringLower(file.Sha256.Span), error.Message, StringComparison.Ordinal);
        Assert.Contains("changed on the way", error.Message, StringComparison.Ordinal);
        Assert.Single(cache.Missing(manifest));
        Assert.Empty(Directory.EnumerateFiles(Path.Combine(cache.Root, "files")));
    }

    [Theory]
    [InlineData("assembl", "ended after 7 of its 8 bytes")]
    [InlineData("assembly+", "more than its 8 bytes")]
    public async Task AddAsync_WrongLength_RefusedSayingHow(string sent, string expected)
    {
        var cache = Cache();
        var file = Program(("app.dll", "assembly", false)).Manifest.Files[0];

        var error = await Assert.ThrowsAsync<InvalidDataException>(() =>
            cache.AddAsync(file.Sha256.Memory, file.Size, Pieces(Encoding.UTF8.GetBytes(sent)), NoneRunning, CancellationToken.None)).WaitAsync(Timeout);

        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Materialize_StoreFileAlteredOnDisk_RefusedNamingTheFile()
    {
        var cache = Cache();
        var (manifest, contents) = Program(("app.dll", "assembly", false));
        await SendAllAsync(cache, manifest, contents);
        var stored = StoredFile(cache, manifest.Files[0]);
        if (!OperatingSystem.IsWindows()) File.SetUnixFileMode(stored, UnixFileMode.UserRead | UnixFileMode.UserWrite);
        File.WriteAllText(stored, "assemblX");

        var error = Assert.Throws<InvalidDataException>(() => cache.Materialize(manifest));

        Assert.Contains("'app.dll' is altered", error.Message, StringComparison.Ordinal);
        Assert.Empty(Directory.EnumerateFileSystemEntries(Path.Combine(cache.Root, "programs")));
    }

    [Fact]
    public void Materialize_FileNeverSent_RefusedNamingIt()
    {
        var (manifest, _) = Program(("app.dll", "assembly", false));

        var error = Assert.Throws<InvalidDataException>(() => Cache().Materialize(manifest));

        Assert.Contains("'app.dll'", error.Message, StringComparison.Ordinal);
        Assert.Contains("never sent", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void Materialize_PathLeavingTheDirectory_RefusedBeforeWritingAnything()
    {
        var manifest = new StagedProgram { Files = { new StagedFile { Path = "../escape", Sha256 = ByteString.CopyFrom(new byte[32]) } } };

        var error = Assert.Throws<InvalidDataException>(() => Cache().Materialize(manifest));

        Assert.Contains("malformed", error.Message, StringComparison.Ordinal);
        Assert.False(File.Exists(Path.Combine(_root.FullName, "store", "programs", "..", "escape")));
    }

    [Fact]
    public async Task Clean_UnusedPastKeep_RemovesThemButNotAProgramInUse()
    {
        var cache = Cache();
        var (used, usedContents) = Program(("used.dll", "used", false));
        var (old, oldContents) = Program(("old.dll", "old", false));
        await SendAllAsync(cache, used, usedContents);
        await SendAllAsync(cache, old, oldContents);
        var running = cache.Materialize(used);
        var stale = cache.Materialize(old);

        // Act: eight days on, with one program's launch still running.
        int removed = cache.Clean(DateTime.UtcNow + TimeSpan.FromDays(8), new HashSet<string> { running });

        Assert.Equal(3, removed); // the stale program and both files
        Assert.True(Directory.Exists(running));
        Assert.False(Directory.Exists(stale));
        Assert.Equal(0, cache.Clean(DateTime.UtcNow, new HashSet<string>()));
    }

    [LinuxFact]
    [System.Runtime.Versioning.SupportedOSPlatform("linux")]
    public async Task Materialize_ProgramFilesAreReadOnlyLinksToTheStoresFiles()
    {
        // Arrange
        var cache = Cache();
        var (manifest, contents) = Program(("app.dll", "assembly", false), ("run.sh", "#!/bin/sh\n", true));
        await SendAllAsync(cache, manifest, contents);

        // Act
        var directory = cache.Materialize(manifest);

        // Assert: each program file is the store's file under a second name (one inode, two links), not a copy,
        // and neither its ranks nor anything else of the agent user's writes to it by mistake.
        foreach (var file in manifest.Files)
        {
            var placed = Path.Combine(directory, file.Path);
            Assert.Equal(await StatAsync(StoredFile(cache, file)), await StatAsync(placed));
            Assert.EndsWith(" 2", await StatAsync(placed), StringComparison.Ordinal);
            Assert.Equal(file.Executable ? UnixFileMode.UserRead | UnixFileMode.UserExecute : UnixFileMode.UserRead, File.GetUnixFileMode(placed));
        }
    }

    [Fact]
    public async Task AddAsync_PastTheLimit_LeastRecentlyUsedGoButNotARunningProgramsFiles()
    {
        // Arrange: a 25-byte limit; a running program (10 bytes), then an older and a newer unused file (5 each).
        var cache = Cache(limit: 25);
        var (running, runningContents) = Program(("running.dll", "0123456789", false));
        var (older, olderContents) = Program(("older.dll", "older", false));
        var (newer, newerContents) = Program(("newer.dll", "newer", false));
        await SendAllAsync(cache, running, runningContents);
        var inUse = new HashSet<string> { cache.Materialize(running) };
        await SendAllAsync(cache, older, olderContents, inUse);
        File.SetLastWriteTimeUtc(StoredFile(cache, older.Files[0]), DateTime.UtcNow.AddHours(-1));
        await SendAllAsync(cache, newer, newerContents, inUse);
        File.SetLastWriteTimeUtc(StoredFile(cache, running.Files[0]), DateTime.UtcNow.AddHours(-2));

        // Act: 8 bytes more need 3 bytes of room (20 + 8 > 25).
        var (arriving, arrivingContents) = Program(("arriving.dll", "arriving", false));
        await SendAllAsync(cache, arriving, arrivingContents, inUse);

        // Assert: the least recently used unused file went; the running program's older file and the newer one stay.
        Assert.False(File.Exists(StoredFile(cache, older.Files[0])));
        Assert.True(File.Exists(StoredFile(cache, running.Files[0])));
        Assert.True(File.Exists(StoredFile(cache, newer.Files[0])));
        Assert.True(File.Exists(StoredFile(cache, arriving.Files[0])));
        Assert.Equal(23, Directory.EnumerateFiles(Path.Combine(cache.Root, "files")).Sum(file => new FileInfo(file).Length));
    }

    [Fact]
    public async Task MakeRoomFor_MoreThanFitsBesideRunningPrograms_RefusedNamingTheLimitBeforeAnyByte()
    {
        // Arrange: a running program holds 10 of the 16 bytes the store may keep.
        var cache = Cache(limit: 16);
        var (running, runningContents) = Program(("running.dll", "0123456789", false));
        await SendAllAsync(cache, running, runningContents);
        var inUse = new HashSet<string> { cache.Materialize(running) };
        var (big, _) = Program(("big.dll", "0123456789", false), ("running.dll", "0123456789", false), ("other.dll", "abcdefgh", false));

        // Act: its one missing file (the others' bytes are the running program's), 8 bytes, does not fit beside them.
        var missing = cache.Missing(big);
        var error = Assert.Throws<StagingFullException>(() => cache.MakeRoomFor(big, missing, inUse));

        // Assert
        Assert.Single(missing);
        Assert.Contains("staging needs 8 bytes more, but this agent keeps at most 16 bytes of staged files (pmpi agent --staging-limit) and 10 bytes of them are held", error.Message, StringComparison.Ordinal);
        Assert.True(File.Exists(StoredFile(cache, running.Files[0])));
    }

    /// <summary>A file's inode and link count, as stat(1) prints them.</summary>
    private static async Task<string> StatAsync(string path)
    {
        var stat = System.Diagnostics.Process.Start(new System.Diagnostics.ProcessStartInfo("stat", ["--format=%i %h", path]) { RedirectStandardOutput = true })!;
        try
        {
            var output = await stat.StandardOutput.ReadToEndAsync().WaitAsync(Timeout);
            await stat.WaitForExitAsync().WaitAsync(Timeout);
            return output.Trim();
        }
        finally
        {
            if (!stat.HasExited) stat.Kill();
            stat.Dispose();
        }
    }
}

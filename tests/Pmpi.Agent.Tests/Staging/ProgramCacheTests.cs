using System.Security.Cryptography;
using System.Text;
using Google.Protobuf;
using Pmpi.Agent.Staging;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Tests.Staging;

/// <summary>An agent's store of staged programs: files kept by hash once checked, programs made from them, the unused removed.</summary>
public sealed class ProgramCacheTests : IDisposable
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);
    private readonly DirectoryInfo _root = Directory.CreateTempSubdirectory("pmpi-cache-");

    public void Dispose() => _root.Delete(recursive: true);

    private ProgramCache Cache() => new(Path.Combine(_root.FullName, "store"), TimeSpan.FromDays(7));

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

    private static async Task SendAllAsync(ProgramCache cache, StagedProgram manifest, Dictionary<string, byte[]> contents)
    {
        foreach (var file in manifest.Files)
            await cache.AddAsync(file.Sha256.Memory, file.Size, Pieces(contents[file.Path]), CancellationToken.None).WaitAsync(Timeout);
    }

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
            cache.AddAsync(file.Sha256.Memory, file.Size, Pieces("assemblX"u8.ToArray()), CancellationToken.None)).WaitAsync(Timeout);

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
            cache.AddAsync(file.Sha256.Memory, file.Size, Pieces(Encoding.UTF8.GetBytes(sent)), CancellationToken.None)).WaitAsync(Timeout);

        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Materialize_StoreFileAlteredOnDisk_RefusedNamingTheFile()
    {
        var cache = Cache();
        var (manifest, contents) = Program(("app.dll", "assembly", false));
        await SendAllAsync(cache, manifest, contents);
        File.WriteAllText(Path.Combine(cache.Root, "files", Convert.ToHexStringLower(manifest.Files[0].Sha256.Span)), "assemblX");

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
}

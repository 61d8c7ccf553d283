using System.Security.Cryptography;
using Google.Protobuf;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Tests.Staging;

/// <summary>A staged program's manifest: built from a directory, named by its digest, refused when it could write outside its directory.</summary>
public sealed class ProgramManifestTests : IDisposable
{
    private readonly DirectoryInfo _program = Directory.CreateTempSubdirectory("pmpi-manifest-");

    public void Dispose() => _program.Delete(recursive: true);

    private void Write(string path, string text)
    {
        var full = Path.Combine(_program.FullName, path);
        Directory.CreateDirectory(Path.GetDirectoryName(full)!);
        File.WriteAllText(full, text);
    }

    [Fact]
    public void Of_Directory_ListsEveryFileInOrderWithItsHashSizeAndExecutableBit()
    {
        Write("app.dll", "assembly");
        Write("runtimes/linux-x64/native/lib.so", "native");
        Write(".hidden", "h");
        if (!OperatingSystem.IsWindows()) File.SetUnixFileMode(Path.Combine(_program.FullName, "app.dll"), UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);

        var manifest = ProgramManifest.Of(_program.FullName);

        Assert.Equal([".hidden", "app.dll", "runtimes/linux-x64/native/lib.so"], manifest.Files.Select(file => file.Path));
        var app = manifest.Files[1];
        Assert.Equal(SHA256.HashData("assembly"u8), app.Sha256.ToByteArray());
        Assert.Equal(8, app.Size);
        Assert.Equal(!OperatingSystem.IsWindows(), app.Executable);
        Assert.False(manifest.Files[0].Executable);
        Assert.Null(ProgramManifest.Problem(manifest));
    }

    [Fact]
    public void Digest_OneByteOrOneBitChanged_Differs()
    {
        Write("app.dll", "assembly");
        var original = ProgramManifest.Of(_program.FullName);
        Write("app.dll", "assemblY");
        var edited = ProgramManifest.Of(_program.FullName);
        var executable = original.Clone();
        executable.Files[0].Executable = !executable.Files[0].Executable;

        Assert.Equal(ProgramManifest.Digest(original), ProgramManifest.Digest(original.Clone()));
        Assert.NotEqual(ProgramManifest.Digest(original), ProgramManifest.Digest(edited));
        Assert.NotEqual(ProgramManifest.Digest(original), ProgramManifest.Digest(executable));
    }

    [Theory]
    [InlineData("../escape", "'.' or '..' segment")]
    [InlineData("a/../../escape", "'.' or '..' segment")]
    [InlineData("/etc/passwd", "rooted path")]
    [InlineData("a//b", "empty, '.' or '..' segment")]
    [InlineData("a\\b", "'\\' or NUL")]
    [InlineData("C:/x", "':'")]
    [InlineData("", "empty path")]
    public void Problem_PathLeavingOrNotNamingAFileInTheDirectory_NamesIt(string path, string expected)
    {
        var manifest = new StagedProgram { Files = { Entry(path) } };

        Assert.Contains(expected, ProgramManifest.Problem(manifest), StringComparison.Ordinal);
    }

    [Fact]
    public void Problem_PathTwiceOrOutOfOrderOrShortHash_NamesIt()
    {
        Assert.Contains("ordinal order", ProgramManifest.Problem(new StagedProgram { Files = { Entry("b"), Entry("a") } }), StringComparison.Ordinal);
        Assert.Contains("ordinal order", ProgramManifest.Problem(new StagedProgram { Files = { Entry("a"), Entry("a") } }), StringComparison.Ordinal);
        Assert.Contains("hash of 3 bytes", ProgramManifest.Problem(new StagedProgram { Files = { new StagedFile { Path = "a", Sha256 = ByteString.CopyFrom(1, 2, 3) } } }), StringComparison.Ordinal);
    }

    private static StagedFile Entry(string path) => new() { Path = path, Sha256 = ByteString.CopyFrom(new byte[32]), Size = 0 };
}

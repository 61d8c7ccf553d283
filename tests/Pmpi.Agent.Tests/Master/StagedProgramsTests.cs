using System.Security.Cryptography;
using Google.Protobuf;
using Pmpi.Agent.Master;
using Pmpi.Rpc.Staging;
using Pmpi.Rpc.V1;

namespace Pmpi.Agent.Tests.Master;

/// <summary>
/// A staged program's files, named as the computation names its programs (in the submitter's directory) or as a rank
/// running from an agent's copy names them: what a staged rank may spawn.
/// </summary>
public sealed class StagedProgramsTests
{
    private static readonly string Submitted = Path.Combine(Path.GetTempPath(), "app", "bin");

    private static StagedPrograms.Program Program()
    {
        var manifest = new StagedProgram();
        foreach (var path in new[] { "App.dll", "tools/Child.dll" })
            manifest.Files.Add(new StagedFile { Path = path, Sha256 = ByteString.CopyFrom(SHA256.HashData(System.Text.Encoding.UTF8.GetBytes(path))), Size = path.Length });
        return new StagedPrograms.Program(manifest, ByteString.CopyFrom(ProgramManifest.Digest(manifest)), Submitted);
    }

    [Fact]
    public void FileOf_PathsInTheSubmittedDirectory_NameTheirFilesAndNoOthers()
    {
        var program = Program();

        Assert.Equal("App.dll", program.FileOf(Path.Combine(Submitted, "App.dll")));
        Assert.Equal("tools/Child.dll", program.FileOf(Path.Combine(Submitted, "tools", "Child.dll")));
        Assert.Null(program.FileOf(Path.Combine(Submitted, "Other.dll")));
        Assert.Null(program.FileOf(Path.Combine(Path.GetTempPath(), "App.dll")));
    }

    [Fact]
    public void SubmittedPathOf_AFileOfAnAgentsCopy_IsItsPathInTheSubmittedDirectory()
    {
        var program = Program();
        var copy = Path.Combine("/var/lib/agent/staged/programs", Convert.ToHexStringLower(program.Digest.Span));

        Assert.Equal(Path.Combine(Submitted, "tools", "Child.dll"), program.SubmittedPathOf(Path.Combine(copy, "tools", "Child.dll")));
        Assert.Equal(Path.Combine(Submitted, "App.dll"), program.SubmittedPathOf(Path.Combine(copy, "App.dll")));
    }

    [Theory]
    [InlineData("{copy}/Other.dll")]          // not one of the program's files
    [InlineData("{copy}/../../../../bin/sh")] // leaving the copy
    [InlineData("{other}/App.dll")]           // another program's copy
    [InlineData("/bin/sh")]                   // no copy at all
    public void SubmittedPathOf_AnythingElse_IsNull(string path)
    {
        var program = Program();
        var copy = "/var/lib/agent/staged/programs/" + Convert.ToHexStringLower(program.Digest.Span);
        var other = "/var/lib/agent/staged/programs/" + new string('0', 64);

        Assert.Null(program.SubmittedPathOf(path.Replace("{copy}", copy, StringComparison.Ordinal).Replace("{other}", other, StringComparison.Ordinal)));
    }
}

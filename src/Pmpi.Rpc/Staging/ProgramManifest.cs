using System.Security.Cryptography;
using System.Text;
using Google.Protobuf;
using Pmpi.Rpc.Internal;
using Pmpi.Rpc.V1;

namespace Pmpi.Rpc.Staging;

/// <summary>
/// What a staged program is (<see cref="StagedProgram"/>): built from a directory where the job is submitted, checked
/// where it lands. Its <see cref="Digest"/> names it: a job's ticket signs the digests of the programs its launches
/// may stage, so an agent runs only the files the submitter shipped.
/// </summary>
public static class ProgramManifest
{
    /// <summary>The most files a staged program may have: a .NET application directory has tens to hundreds.</summary>
    public const int MaxFiles = 10_000;

    /// <summary>
    /// The manifest of every file under <paramref name="directory"/> (hidden ones included; symbolic links followed,
    /// so what runs is what the submitter's program would have read), hashed as it is read.
    /// </summary>
    /// <exception cref="IOException">A file could not be read, or there are more than <see cref="MaxFiles"/>.</exception>
    public static StagedProgram Of(string directory)
    {
        ArgumentNullException.ThrowIfNull(directory);
        var root = Path.GetFullPath(directory);
        var files = Directory.EnumerateFiles(root, "*", new EnumerationOptions { RecurseSubdirectories = true, AttributesToSkip = 0 })
            .Select(path => (Relative: Path.GetRelativePath(root, path).Replace(Path.DirectorySeparatorChar, '/'), Full: path))
            .OrderBy(file => file.Relative, StringComparer.Ordinal)
            .ToList();
        if (files.Count > MaxFiles) throw new IOException($"{root} has {files.Count} files; a staged program may have at most {MaxFiles}.");
        var manifest = new StagedProgram();
        foreach (var (relative, full) in files)
        {
            using var content = File.OpenRead(full);
            manifest.Files.Add(new StagedFile
            {
                Path = relative,
                Sha256 = ByteString.CopyFrom(SHA256.HashData(content)),
                Size = content.Length,
                Executable = !OperatingSystem.IsWindows() && (File.GetUnixFileMode(full) & UnixFileMode.UserExecute) != 0,
            });
        }
        return manifest;
    }

    /// <summary>
    /// The SHA-256 that names <paramref name="manifest"/>: over each file's path, hash, size and executable bit in
    /// order, in a fixed encoding (not protobuf's, which does not promise one byte sequence per message).
    /// </summary>
    public static byte[] Digest(StagedProgram manifest)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        using var hash = IncrementalHash.CreateHash(HashAlgorithmName.SHA256);
        Span<byte> number = stackalloc byte[8];
        foreach (var file in manifest.Files)
        {
            var path = Encoding.UTF8.GetBytes(file.Path);
            System.Buffers.Binary.BinaryPrimitives.WriteInt64BigEndian(number, path.Length);
            hash.AppendData(number);
            hash.AppendData(path);
            hash.AppendData(file.Sha256.Span);
            System.Buffers.Binary.BinaryPrimitives.WriteInt64BigEndian(number, file.Size);
            hash.AppendData(number);
            hash.AppendData([file.Executable ? (byte)1 : (byte)0]);
        }
        return hash.GetHashAndReset();
    }

    /// <summary>
    /// What is wrong with <paramref name="manifest"/> as a program to write to disk, or null: too many files, a path
    /// that is empty, rooted, not '/'-separated or leaves its directory, a path twice or out of order, a hash that is
    /// not 32 bytes, a negative size.
    /// </summary>
    public static string? Problem(StagedProgram manifest)
    {
        ArgumentNullException.ThrowIfNull(manifest);
        if (manifest.Files.Count > MaxFiles) return $"it has {manifest.Files.Count} files, more than the {MaxFiles} a staged program may have";
        string? previous = null;
        foreach (var file in manifest.Files)
        {
            if (PathProblem(file.Path) is { } problem) return $"file '{LogText.Printable(file.Path)}' {problem}";
            if (previous is not null && string.CompareOrdinal(previous, file.Path) >= 0)
                return $"file '{LogText.Printable(file.Path)}' comes after '{LogText.Printable(previous)}': the files must be in ordinal order of their paths, each once";
            if (file.Sha256.Length != SHA256.HashSizeInBytes) return $"file '{LogText.Printable(file.Path)}' has a hash of {file.Sha256.Length} bytes, not {SHA256.HashSizeInBytes}";
            if (file.Size < 0) return $"file '{LogText.Printable(file.Path)}' has a negative size";
            previous = file.Path;
        }
        return null;
    }

    private static string? PathProblem(string path)
    {
        if (path.Length == 0) return "has an empty path";
        if (path.Contains('\\', StringComparison.Ordinal) || path.Contains('\0', StringComparison.Ordinal)) return "has a path with '\\' or NUL in it";
        if (path.StartsWith('/') || Path.IsPathRooted(path)) return "has a rooted path";
        foreach (var segment in path.Split('/'))
        {
            if (segment is "" or "." or "..") return "has an empty, '.' or '..' segment in its path";
            if (segment.Contains(':', StringComparison.Ordinal)) return "has a ':' in its path (a Windows drive or stream)";
        }
        return null;
    }
}

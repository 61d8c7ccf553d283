namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>A temporary directory for a test's computation files and markers, deleted on dispose.</summary>
internal sealed class ScratchDirectory : IDisposable
{
    /// <summary>Its full path.</summary>
    public string Path { get; } = Directory.CreateDirectory(System.IO.Path.Combine(System.IO.Path.GetTempPath(), $"pmpi-it-{Guid.NewGuid():N}")).FullName;

    /// <summary>Writes <paramref name="text"/> to <paramref name="name"/> here; returns the file's path.</summary>
    public string Write(string name, string text)
    {
        var file = System.IO.Path.Combine(Path, name);
        File.WriteAllText(file, text);
        return file;
    }

    /// <summary>Deletes the directory; one left behind harms nothing.</summary>
    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (IOException)
        {
        }
    }
}

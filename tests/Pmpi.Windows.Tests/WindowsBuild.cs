using System.Reflection;
using System.Text.Json.Nodes;

namespace Pmpi.Windows.Tests;

/// <summary>
/// PMPI's Windows build, run under Wine: `pmpi.exe` (src/Pmpi.Cli) and the test rank program (tests/Pmpi.TestRanks)
/// published self-contained for win-x64 into a temporary directory, and a Wine prefix of their own there. Wine runs
/// the Windows binaries on this Linux machine through its implementation of the Win32 API, so PMPI's Windows branches
/// (job objects, event handles waking shared-memory readers, named mappings, Windows sockets) execute for real. Wine
/// is not Windows: what this shows and does not is in docs/architecture.md, *Windows*.
/// </summary>
public sealed class WindowsBuild : IAsyncLifetime
{
    /// <summary>The test collection that shares one build (publishing takes a minute) and runs its classes one at a time.</summary>
    public const string Collection = "Windows build under Wine";

    private static readonly TimeSpan PublishTimeout = TimeSpan.FromMinutes(10);
    private static readonly string? Wine = new[] { "/usr/bin/wine", "/usr/bin/wine64" }.FirstOrDefault(File.Exists);

    /// <summary>Where the fixture keeps everything; its name is unique, so a process whose command line holds it is this fixture's.</summary>
    public string Root { get; } = Directory.CreateDirectory(Path.Combine(Path.GetTempPath(), $"pmpi-wine-{Guid.NewGuid():N}")).FullName;

    /// <summary>pmpi.exe, as a Linux path.</summary>
    public string Pmpi => Path.Combine(Root, "pmpi", "pmpi.exe");

    /// <summary>Pmpi.TestRanks.exe, as the Windows programs see it.</summary>
    public string TestRanks => WindowsPath(TestRanksOnLinux);

    /// <summary>Pmpi.TestRanks.exe, as a Linux path: what a Linux submitter stages.</summary>
    public string TestRanksOnLinux => Path.Combine(Root, "ranks", "Pmpi.TestRanks.exe");

    /// <summary>Why the Windows build cannot run here, or null.</summary>
    public static string? Unavailable() =>
        !OperatingSystem.IsLinux() ? "Runs PMPI's Windows build under Wine, on Linux."
        : Wine is null ? "Needs Wine (Debian's wine and wine64, which .ci/apt-packages installs)."
        : null;

    /// <summary>A Linux path as a Windows program under Wine names it: drive Z: is the Linux root.</summary>
    public static string WindowsPath(string linuxPath) => "Z:" + linuxPath.Replace('/', '\\');

    /// <summary>Starts `pmpi.exe <paramref name="arguments"/>` under Wine.</summary>
    internal ChildProcess Start(params string[] arguments) => ChildProcess.Start(Wine!, [Pmpi, .. arguments], WineEnvironment);

    /// <summary>
    /// The Linux processes of the test rank program whose arguments start with <paramref name="arguments"/> (Wine
    /// gives each Windows process a Linux process whose command line is the Windows one).
    /// </summary>
    public IReadOnlyList<int> RankProcesses(string arguments) => Processes(commandLine => commandLine.StartsWith($"{TestRanks} {arguments}", StringComparison.Ordinal));

    private List<int> Processes(Func<string, bool> match)
    {
        var found = new List<int>();
        foreach (var directory in Directory.EnumerateDirectories("/proc"))
        {
            if (!int.TryParse(Path.GetFileName(directory), out int id)) continue;
            try
            {
                if (match(File.ReadAllText(Path.Combine(directory, "cmdline")).Replace('\0', ' '))) found.Add(id);
            }
            catch (IOException)
            {
                // Ended while being read.
            }
        }
        return found;
    }

    public async Task InitializeAsync()
    {
        if (Unavailable() is not null) return;
        await PublishAsync("CliProject", "pmpi");
        await PublishAsync("TestRanksProject", "ranks");
        // The first Wine program creates the prefix (about ten seconds); later ones start at once.
        var (code, transcript) = await ChildProcess.RunAsync(Wine!, [Pmpi, "--version"], PublishTimeout, WineEnvironment);
        Assert.True(code == 0, $"pmpi.exe --version under Wine failed (exit {code}):\n{transcript}");
    }

    public async Task DisposeAsync()
    {
        if (Unavailable() is null)
        {
            // Ends every process of this prefix (Wine's own services too), then anything of the fixture left.
            await ChildProcess.RunAsync("wineserver", ["-k"], TimeSpan.FromSeconds(30), WineEnvironment);
            foreach (int id in Processes(commandLine => commandLine.Contains(Path.GetFileName(Root), StringComparison.Ordinal)))
            {
                try
                {
                    System.Diagnostics.Process.GetProcessById(id).Kill();
                }
                catch (ArgumentException)
                {
                    // Already gone.
                }
            }
        }
        Directory.Delete(Root, recursive: true);
    }

    private Dictionary<string, string?> WineEnvironment => new()
    {
        ["WINEPREFIX"] = Path.Combine(Root, "prefix"),
        ["WINEDEBUG"] = "-all",
        // No HTML engine: nothing here shows a page, and Wine would offer to download one.
        ["WINEDLLOVERRIDES"] = "mshtml=",
        ["DISPLAY"] = null,
        // `dotnet test` names its Linux host here; under Wine the path would lead a Windows agent to a Linux executable.
        ["DOTNET_HOST_PATH"] = null,
    };

    /// <summary>
    /// Publishes the project the test assembly's metadata <paramref name="projectKey"/> names, self-contained for
    /// win-x64, into <paramref name="directory"/> under <see cref="Root"/>; returns that directory as a Linux path.
    /// </summary>
    /// <remarks>
    /// Each program runs with dynamic code off, as pmpi.exe and the test ranks are built to: Wine's CLR dies
    /// ("Internal CLR error (0x80131506)" in DynamicResolver+DestroyScout.Finalize) when a GC finalizes a dynamic
    /// method, such as the reflection stub a rank emits while .NET makes the EventSource behind its meter. Windows
    /// itself does not; the examples stay as users build them, and only their published copies here are set so.
    /// </remarks>
    internal async Task<string> PublishAsync(string projectKey, string directory)
    {
        var project = typeof(WindowsBuild).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == projectKey).Value!;
        // Its own artifacts path, so this build's obj/ never meets the solution's (built for linux-x64) or a concurrent publish.
        var (code, transcript) = await ChildProcess.RunAsync(DotnetHost,
            ["publish", project, "-c", "Release", "-r", "win-x64", "--self-contained", "-o", Path.Combine(Root, directory),
             "--artifacts-path", Path.Combine(Root, "artifacts"), "-nologo"], PublishTimeout);
        Assert.True(code == 0, $"publishing {project} for win-x64 failed (exit {code}):\n{transcript}");
        foreach (var runtimeConfig in Directory.EnumerateFiles(Path.Combine(Root, directory), "*.runtimeconfig.json"))
        {
            var config = JsonNode.Parse(await File.ReadAllTextAsync(runtimeConfig))!;
            var properties = config["runtimeOptions"]!["configProperties"] ??= new JsonObject();
            properties["System.Runtime.CompilerServices.RuntimeFeature.IsDynamicCodeSupported"] = false;
            await File.WriteAllTextAsync(runtimeConfig, config.ToJsonString());
        }
        return Path.Combine(Root, directory);
    }

    /// <summary>The dotnet host running the tests.</summary>
    internal static string DotnetHost =>
        System.Environment.GetEnvironmentVariable("DOTNET_HOST_PATH") is { Length: > 0 } host && File.Exists(host) ? host
        : System.Environment.ProcessPath is { } current && Path.GetFileNameWithoutExtension(current) == "dotnet" ? current
        : "dotnet";
}

[CollectionDefinition(WindowsBuild.Collection)]
public sealed class WindowsBuildCollection : ICollectionFixture<WindowsBuild>;

/// <summary>A fact that runs PMPI's Windows build under Wine; shown as skipped, saying why, where it cannot.</summary>
public sealed class WineFactAttribute : FactAttribute
{
    public WineFactAttribute()
    {
        if (WindowsBuild.Unavailable() is { } reason) Skip = reason;
    }
}

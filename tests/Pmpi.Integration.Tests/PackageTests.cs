using System.IO.Compression;
using System.Reflection;
using System.Reflection.PortableExecutable;
using System.Xml.Linq;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// The packages a user takes, packed once for the class (<see cref="PackedPackages"/>): each carries its readme and
/// description; Pmpi.Core and Pmpi.Rpc carry IL for every platform in lib/ and beside it, for each runtime PMPI runs
/// on, an image with that runtime's native code (ReadyToRun), which NuGet and the dotnet host give a rank on that
/// runtime; and `dotnet new pmpi` from the template package makes, in each language, a project that builds against
/// the packages and runs under `pmpi run`.
/// </summary>
public sealed class PackageTests(PackageTests.PackedPackages packed) : IClassFixture<PackageTests.PackedPackages>
{
    private static readonly TimeSpan BuildTimeout = TimeSpan.FromMinutes(5);

    // The PE machine of a ReadyToRun image names the operating system too: x64's, exclusive-or a value per system.
    private const ushort Amd64 = 0x8664;
    private const ushort LinuxOverride = 0x7B79;

    [Theory]
    [InlineData("Pmpi.Core")]
    [InlineData("Pmpi.Rpc")]
    public void Pack_Library_CarriesILInLibAndReadyToRunCodeForLinuxAndWindowsX64(string library)
    {
        // Arrange
        using var package = packed.Open(library);

        // Act
        var il = Headers(package, $"lib/net10.0/{library}.dll");

        // Assert
        Assert.True(il.CorHeader!.Flags.HasFlag(CorFlags.ILOnly), $"{library}'s lib/ image is not IL only");
        Assert.Equal(0, il.CorHeader.ManagedNativeHeaderDirectory.Size);
        foreach (var (runtime, machine) in new[] { ("linux-x64", (ushort)(Amd64 ^ LinuxOverride)), ("win-x64", Amd64) })
        {
            var compiled = Headers(package, $"runtimes/{runtime}/lib/net10.0/{library}.dll");
            Assert.True(compiled.CorHeader!.ManagedNativeHeaderDirectory.Size > 0, $"{library} for {runtime} has no ReadyToRun header");
            Assert.Equal(machine, (ushort)compiled.CoffHeader.Machine);
        }
    }

    [Theory]
    [InlineData("Pmpi.Core", "Dependency")]
    [InlineData("Pmpi.Rpc", "Dependency")]
    [InlineData("Pmpi.FSharp", "Dependency")]
    [InlineData("Pmpi.VisualBasic", "Dependency")]
    [InlineData("Pmpi.Classic", "Dependency")]
    [InlineData("Pmpi.Cli", "DotnetTool")]
    [InlineData("Pmpi.Templates", "Template")]
    public void Pack_Package_CarriesItsReadmeDescriptionTagsAndType(string id, string type)
    {
        // Arrange
        using var package = packed.Open(id);

        // Act
        var nuspec = Nuspec(package, id);
        string? Field(string name) => nuspec.Elements().SingleOrDefault(e => e.Name.LocalName == name)?.Value;

        // Assert: the readme is the package's own, and its first line names the package (or, for the tool, its command).
        Assert.Equal(id, Field("id"));
        Assert.Equal(packed.Version, Field("version"));
        Assert.Equal("README.md", Field("readme"));
        using (var readme = new StreamReader(package.GetEntry("README.md")!.Open()))
            Assert.Equal(id == "Pmpi.Cli" ? "# pmpi" : $"# {id}", readme.ReadLine());
        Assert.False(string.IsNullOrWhiteSpace(Field("description")));
        Assert.Contains("mpi", Field("tags")!.Split(' '));
        Assert.Equal("git", nuspec.Elements().Single(e => e.Name.LocalName == "repository").Attribute("type")?.Value);
        var types = nuspec.Elements().SingleOrDefault(e => e.Name.LocalName == "packageTypes")?.Elements().Select(e => e.Attribute("name")!.Value).ToArray() ?? [];
        string[] expected = type == "Dependency" ? [] : [type];
        Assert.Equal(expected, types);
    }

    [Theory]
    [InlineData("C#", "Pmpi.Core", ".csproj")]
    [InlineData("F#", "Pmpi.FSharp", ".fsproj")]
    [InlineData("VB", "Pmpi.VisualBasic", ".vbproj")]
    public async Task NewPmpi_InEachLanguage_BuildsAgainstThePackagesAndRunsUnderPmpiRun(string language, string library, string extension)
    {
        // Arrange: as a user would, with the template installed (in the fixture's own template hive).
        string name = $"MyJob{extension[1..3].ToUpperInvariant()}";
        string project = Path.Combine(packed.ProjectsDirectory, name);

        // Act
        var (created, creation) = await packed.DotnetAsync(["new", "pmpi", "-lang", language, "-n", name, "-o", project,
            "--debug:custom-hive", packed.TemplateHive, "--no-update-check"], PmpiCli.Timeout);
        Assert.True(created == 0, $"dotnet new pmpi -lang {language} failed (exit {created}):\n{creation}");
        var reference = XDocument.Load(Path.Combine(project, name + extension)).Descendants("PackageReference").Single();
        var (built, build) = await packed.DotnetAsync(["build", project, "--disable-build-servers", "-nologo"], BuildTimeout);
        Assert.True(built == 0, $"dotnet build of the {language} project failed (exit {built}):\n{build}");
        var (code, run) = await ChildProcess.RunAsync(PmpiCli.Command[0],
            [.. PmpiCli.Command.Skip(1), "run", "-n", "2", Path.Combine(project, "bin", "Debug", "net10.0", name + ".dll")], PmpiCli.Timeout, PmpiCli.WithCredential(null));

        // Assert: the project takes the language's package at the version packed, and each rank of two has its say.
        Assert.Equal(library, reference.Attribute("Include")?.Value);
        Assert.Equal(packed.Version, reference.Attribute("Version")?.Value);
        Assert.True(code == 0, $"pmpi run -n 2 {name}.dll failed (exit {code}):\n{run}");
        Assert.Contains("[0] Hello from rank 0 of 2 on ", run, StringComparison.Ordinal);
        Assert.Contains("[1] Hello from rank 1 of 2 on ", run, StringComparison.Ordinal);
        Assert.Contains("[0] The ranks add up to 1", run, StringComparison.Ordinal);
    }

    private static XElement Nuspec(ZipArchive package, string id)
    {
        using var stream = package.GetEntry($"{id}.nuspec")!.Open();
        return XDocument.Load(stream).Root!.Elements().Single(e => e.Name.LocalName == "metadata");
    }

    private static PEHeaders Headers(ZipArchive package, string path)
    {
        var entry = package.GetEntry(path) ?? throw new Xunit.Sdk.XunitException($"the package lacks {path}: {string.Join(", ", package.Entries.Select(e => e.FullName))}");
        using var image = new MemoryStream();
        using (var stream = entry.Open()) stream.CopyTo(image);
        image.Position = 0;
        using var reader = new PEReader(image);
        return reader.PEHeaders;
    }

    /// <summary>
    /// The packages a user takes, packed once into a temporary directory, in the configuration the tests were built in,
    /// with the template package installed into a template hive of its own (the machine's template list is left as it
    /// is). Projects made from the templates restore from that directory and the machine's NuGet sources into a
    /// packages folder of their own, so a package of this version cached by an earlier run is never taken instead.
    /// </summary>
    public sealed class PackedPackages : IAsyncLifetime
    {
        private static readonly TimeSpan PackTimeout = TimeSpan.FromMinutes(15);

        private static readonly string[] Projects =
        [
            "src/Pmpi.Rpc/Pmpi.Rpc.csproj", "src/Pmpi.Core/Pmpi.Core.csproj", "src/bindings/fsharp/Pmpi.FSharp.fsproj",
            "src/bindings/vb/Pmpi.VisualBasic.vbproj", "src/bindings/classic/Pmpi.Classic.csproj", "src/Pmpi.Cli/Pmpi.Cli.csproj",
            "templates/Pmpi.Templates/Pmpi.Templates.csproj",
        ];

        private readonly ScratchDirectory _scratch = new();

        /// <summary>Where the packages are.</summary>
        public string PackageDirectory => Path.Combine(_scratch.Path, "packages");

        /// <summary>The template hive `dotnet new` is given (--debug:custom-hive).</summary>
        public string TemplateHive => Path.Combine(_scratch.Path, "templates");

        /// <summary>Where tests make projects: its nuget.config names <see cref="PackageDirectory"/> for Pmpi.* packages.</summary>
        public string ProjectsDirectory => Path.Combine(_scratch.Path, "projects");

        /// <summary>The version the packages were packed at.</summary>
        public string Version { get; private set; } = "";

        /// <summary>Opens package <paramref name="id"/>.</summary>
        public ZipArchive Open(string id) => ZipFile.OpenRead(Path.Combine(PackageDirectory, $"{id}.{Version}.nupkg"));

        /// <summary>Runs `dotnet <paramref name="arguments"/>` with the projects' own NuGet packages folder.</summary>
        public Task<(int ExitCode, string Transcript)> DotnetAsync(IEnumerable<string> arguments, TimeSpan timeout) =>
            ChildProcess.RunAsync(PmpiCli.DotnetHost, arguments, timeout,
                new Dictionary<string, string?> { ["NUGET_PACKAGES"] = Path.Combine(_scratch.Path, "nuget-packages") });

        public async Task InitializeAsync()
        {
            var metadata = typeof(PackedPackages).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().ToDictionary(a => a.Key, a => a.Value!);
            string repository = Path.GetDirectoryName(metadata["SourceDirectory"])!;

            // One solution of the projects that pack, so one build packs them all.
            var solution = _scratch.Write("packages.slnx", new XElement("Solution",
                Projects.Select(p => new XElement("Project", new XAttribute("Path", Path.GetRelativePath(_scratch.Path, Path.Combine(repository, p)))))).ToString());
            var (packedCode, packing) = await ChildProcess.RunAsync(PmpiCli.DotnetHost,
                ["pack", solution, "-c", metadata["Configuration"], $"-p:PackageOutputPath={PackageDirectory}", "--disable-build-servers", "-nologo"], PackTimeout);
            Assert.True(packedCode == 0, $"dotnet pack failed (exit {packedCode}):\n{packing}");
            var core = Directory.GetFiles(PackageDirectory, "Pmpi.Core.*.nupkg").Single(p => !p.EndsWith(".snupkg", StringComparison.Ordinal));
            Version = Path.GetFileNameWithoutExtension(core)["Pmpi.Core.".Length..];

            var (installed, installing) = await DotnetAsync(["new", "install", Path.Combine(PackageDirectory, $"Pmpi.Templates.{Version}.nupkg"),
                "--debug:custom-hive", TemplateHive], PmpiCli.Timeout);
            Assert.True(installed == 0, $"dotnet new install failed (exit {installed}):\n{installing}");

            Directory.CreateDirectory(ProjectsDirectory);
            File.WriteAllText(Path.Combine(ProjectsDirectory, "nuget.config"), await NuGetConfigAsync());
        }

        public Task DisposeAsync()
        {
            _scratch.Dispose();
            return Task.CompletedTask;
        }

        // The machine's enabled sources (as the repository's own restore finds them: the user's and the machine's
        // NuGet.Config) and the package directory, with Pmpi.* mapped to the directory alone, so a package of the
        // same name and version on a public feed is never taken instead of the one just packed.
        private async Task<string> NuGetConfigAsync()
        {
            var (code, listing) = await ChildProcess.RunAsync(PmpiCli.DotnetHost, ["nuget", "list", "source", "--format", "Short"], PmpiCli.Timeout);
            Assert.True(code == 0, $"dotnet nuget list source failed (exit {code}):\n{listing}");
            var sources = listing.Split('\n').Select(l => l.Trim()).Where(l => l.StartsWith("E ", StringComparison.Ordinal)).Select(l => l[2..].Trim()).ToArray();
            var config = new XElement("configuration",
                new XElement("packageSources", new XElement("clear"),
                    new XElement("add", new XAttribute("key", "pmpi"), new XAttribute("value", PackageDirectory)),
                    sources.Select((s, i) => new XElement("add", new XAttribute("key", $"machine{i}"), new XAttribute("value", s)))),
                new XElement("packageSourceMapping",
                    new XElement("packageSource", new XAttribute("key", "pmpi"), new XElement("package", new XAttribute("pattern", "Pmpi.*"))),
                    sources.Select((_, i) => new XElement("packageSource", new XAttribute("key", $"machine{i}"), new XElement("package", new XAttribute("pattern", "*"))))));
            return config.ToString();
        }
    }
}

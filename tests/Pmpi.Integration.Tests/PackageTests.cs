using System.IO.Compression;
using System.Reflection;
using System.Reflection.PortableExecutable;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// The Pmpi.Core and Pmpi.Rpc packages a user references: IL for every platform in lib/, and beside it, for each
/// runtime PMPI runs on, an image with that runtime's native code (ReadyToRun), which NuGet and the dotnet host give
/// a rank on that runtime, so it runs compiled code from its first message instead of waiting for the JIT.
/// </summary>
public sealed class PackageTests
{
    private static readonly TimeSpan PackTimeout = TimeSpan.FromMinutes(10);

    // The PE machine of a ReadyToRun image names the operating system too: x64's, exclusive-or a value per system.
    private const ushort Amd64 = 0x8664;
    private const ushort LinuxOverride = 0x7B79;

    [Fact]
    public async Task Pack_CoreAndRpc_CarryILInLibAndReadyToRunCodeForLinuxAndWindowsX64()
    {
        // Arrange
        using var output = new ScratchDirectory();
        var metadata = typeof(PackageTests).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().ToDictionary(a => a.Key, a => a.Value!);

        foreach (var library in new[] { "Pmpi.Core", "Pmpi.Rpc" })
        {
            // Act
            var project = Path.Combine(metadata["SourceDirectory"], library, $"{library}.csproj");
            var (code, transcript) = await ChildProcess.RunAsync(PmpiCli.DotnetHost,
                ["pack", project, "-c", metadata["Configuration"], "-o", output.Path, "-nologo"], PackTimeout);

            // Assert
            Assert.True(code == 0, $"dotnet pack {library} failed (exit {code}):\n{transcript}");
            using var package = ZipFile.OpenRead(Directory.GetFiles(output.Path, $"{library}.*.nupkg").Single(p => !p.EndsWith(".snupkg", StringComparison.Ordinal)));
            var il = Headers(package, $"lib/net10.0/{library}.dll");
            Assert.True(il.CorHeader!.Flags.HasFlag(CorFlags.ILOnly), $"{library}'s lib/ image is not IL only");
            Assert.Equal(0, il.CorHeader.ManagedNativeHeaderDirectory.Size);
            foreach (var (runtime, machine) in new[] { ("linux-x64", (ushort)(Amd64 ^ LinuxOverride)), ("win-x64", Amd64) })
            {
                var compiled = Headers(package, $"runtimes/{runtime}/lib/net10.0/{library}.dll");
                Assert.True(compiled.CorHeader!.ManagedNativeHeaderDirectory.Size > 0, $"{library} for {runtime} has no ReadyToRun header");
                Assert.Equal(machine, (ushort)compiled.CoffHeader.Machine);
            }
        }
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
}

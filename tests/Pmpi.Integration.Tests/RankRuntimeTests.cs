using System.Text.Json;
using System.Text.RegularExpressions;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A rank program needs the .NET runtime alone: what it references (Pmpi.Core and its transport) carries no ASP.NET
/// Core, so its runtimeconfig names Microsoft.NETCore.App and nothing else, a node without ASP.NET Core runs it, and a
/// launched rank loads none of it; a rank that never calls its master loads no gRPC client either.
/// </summary>
public sealed class RankRuntimeTests
{
    [Theory]
    [InlineData("Pmpi.TestRanks")]
    [InlineData("MatMul.CSharp")]
    [InlineData("MatMul.FSharp")]
    [InlineData("MatMul.VisualBasic")]
    [InlineData("Pmpi.Osu")]
    public void RuntimeConfig_OfABuiltRankProgram_NamesMicrosoftNetCoreAppAlone(string program)
    {
        // Arrange: the rank programs this project references are built beside it, each with its runtimeconfig.
        var path = Path.Combine(AppContext.BaseDirectory, $"{program}.runtimeconfig.json");

        // Act
        using var config = JsonDocument.Parse(File.ReadAllText(path));

        // Assert: one framework ("framework") or several ("frameworks"), by name.
        var options = config.RootElement.GetProperty("runtimeOptions");
        var frameworks = options.TryGetProperty("frameworks", out var many)
            ? many.EnumerateArray().Select(framework => framework.GetProperty("name").GetString() ?? "").ToArray()
            : [options.GetProperty("framework").GetProperty("name").GetString() ?? ""];
        Assert.Equal<string>(["Microsoft.NETCore.App"], frameworks);
    }

    [Fact]
    public async Task Run_RanksOverNetworkLinks_LoadNoAspNetCoreAssembly()
    {
        // Act: two ranks whose barrier crosses their network links (rank endpoints and their streams).
        await using var run = PmpiCli.Start(["run", "--links", "network", "--oversubscribe", "-n", "2", PmpiCli.TestRanksDll, "assemblies"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        for (int rank = 0; rank < 2; rank++)
            Assert.Contains(run.Stdout, line => Regex.IsMatch(line, $@"^\[{rank}\] assemblies: \d+ loaded, ASP.NET Core: none, gRPC client and HTTP: "));
    }

    [Fact]
    public async Task Run_RanksOfOneNode_LoadNoGrpcClientNorHttpStack()
    {
        // Act: ranks of one node get their table at launch and link through shared memory: they never call the
        // master, so nothing of gRPC for .NET or the HTTP stack needs loading, each assembly a few ms of every start.
        await using var run = PmpiCli.Start(["run", "--oversubscribe", "-n", "2", PmpiCli.TestRanksDll, "assemblies"]);
        int code = await run.WaitForExitAsync(PmpiCli.Timeout);

        // Assert
        Assert.True(code == 0, $"pmpi run exited with {code}.\n{run.Transcript}");
        for (int rank = 0; rank < 2; rank++)
            Assert.Contains(run.Stdout, line => Regex.IsMatch(line, $@"^\[{rank}\] assemblies: \d+ loaded, ASP.NET Core: none, gRPC client and HTTP: none$"));
    }
}

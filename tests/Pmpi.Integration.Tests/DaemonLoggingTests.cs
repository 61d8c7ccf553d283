using System.Text.Json;
using Pmpi.Integration.Tests.Infrastructure;

namespace Pmpi.Integration.Tests;

/// <summary>
/// A daemon's log follows the standard .NET logging configuration (here from the environment, as a systemd unit's
/// Environment= or a Kubernetes pod would set it): the console's formatter and the level of each category.
/// </summary>
public sealed class DaemonLoggingTests
{
    [LinuxFact]
    public async Task Agent_JsonFormatterConfigured_LogsOneJsonObjectPerEventOnStderr()
    {
        // Act: an agent that starts and stops, each logged.
        await using var agent = PmpiCli.Start(["agent", "--port", "0"], new Dictionary<string, string?> { ["Logging__Console__FormatterName"] = "json" });
        await agent.WaitForLineAsync(line => line.StartsWith("pmpi agent listening on ", StringComparison.Ordinal), PmpiCli.Timeout, "the agent listening");
        await Signals.TerminateAsync(agent.Id);
        int code = await agent.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: every line on stderr is an event as JSON, the first the agent's start.
        Assert.True(code == 0, $"The agent exited with {code}.\n{agent.Transcript}");
        Assert.NotEmpty(agent.Stderr);
        var events = agent.Stderr.Select(line => JsonDocument.Parse(line).RootElement).ToList();
        Assert.All(events, e => Assert.True(e.TryGetProperty("Category", out _) && e.TryGetProperty("Timestamp", out _), $"Not a logged event: {e}"));
        Assert.Contains(events, e => e.GetProperty("Message").GetString()!.StartsWith("pmpi agent listening on ", StringComparison.Ordinal));
    }

    [LinuxFact]
    public async Task Agent_PmpiCategoryAtWarning_LogsNoInformation()
    {
        // Act
        await using var agent = PmpiCli.Start(["agent", "--port", "0"], new Dictionary<string, string?> { ["Logging__LogLevel__Pmpi"] = "Warning" });
        await agent.WaitForLineAsync(line => line.StartsWith("pmpi agent listening on ", StringComparison.Ordinal), PmpiCli.Timeout, "the agent listening");
        await Signals.TerminateAsync(agent.Id);
        int code = await agent.WaitForExitAsync(PmpiCli.Timeout);

        // Assert: neither the start nor the stop, both information, reached the log.
        Assert.True(code == 0, $"The agent exited with {code}.\n{agent.Transcript}");
        Assert.True(agent.Stderr.Count == 0, $"The agent logged below Warning.\n{agent.Transcript}");
    }
}

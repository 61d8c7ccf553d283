using System.Net;
using Microsoft.Extensions.Options;

namespace Pmpi.Agent.Hosting.Internal;

/// <summary>Rejects agent options that would fail later and less clearly (a bind error, a rank that cannot listen).</summary>
internal sealed class AgentOptionsValidator : IValidateOptions<AgentOptions>
{
    public ValidateOptionsResult Validate(string? name, AgentOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        var failures = new List<string>();
        if (!IPAddress.TryParse(options.BindAddress, out _))
            failures.Add($"AgentOptions.BindAddress '{options.BindAddress}' is not an IP address (e.g. 127.0.0.1, 0.0.0.0 or ::); see --bind.");
        if (options.Port is < 0 or > IPEndPoint.MaxPort)
            failures.Add($"AgentOptions.Port {options.Port} is not a TCP port: use 0 (any free port) to {IPEndPoint.MaxPort}; see --port.");
        if (options.Slots < 1)
            failures.Add($"AgentOptions.Slots is {options.Slots}: a node takes at least 1 rank; see --slots.");
        if (options.HeartbeatTimeout < TimeSpan.FromSeconds(2))
            failures.Add($"AgentOptions.HeartbeatTimeout is {options.HeartbeatTimeout.TotalSeconds} s: heartbeats come every second, so allow at least 2 s; see --heartbeat-timeout.");
        if (options.RegistrationTimeout <= TimeSpan.Zero)
            failures.Add($"AgentOptions.RegistrationTimeout is {options.RegistrationTimeout.TotalSeconds} s: it must be positive; see --register-timeout.");
        // Ranks parse it to open their endpoint (RankEnvironment.BindAddress), so a host name would fail in every rank.
        if (!IPAddress.TryParse(options.RankBindAddress, out _))
            failures.Add($"AgentOptions.RankBindAddress '{options.RankBindAddress}' is not an IP address of this node; see --rank-address.");
        if (options.Security is null)
            failures.Add("AgentOptions.Security is not set: give the cluster credential (--credentials DIR, or PMPI_CREDENTIALS naming it; `pmpi cluster init` makes one), or --insecure to accept every caller in cleartext.");
        else if (options.Security.LoopbackOnly && IPAddress.TryParse(options.BindAddress, out var bind) && !IPAddress.IsLoopback(bind))
            failures.Add($"AgentOptions.BindAddress '{options.BindAddress}' is beyond loopback, but {options.Security.Description} does not encrypt; give the cluster credential (--credentials DIR).");
        if (options.Domain is { } domain && string.IsNullOrWhiteSpace(domain))
            failures.Add("AgentOptions.Domain is blank: name the domain or leave it unset; see --domain.");
        if (options.Gateway is { } gateway && (options.Domain is null || !Uri.TryCreate($"https://{gateway}", UriKind.Absolute, out var parsed) || parsed.Port <= 0 || parsed.PathAndQuery != "/"))
            failures.Add($"AgentOptions.Gateway '{gateway}' is not host:port of the node's domain's gateway (it needs --domain too); see --gateway.");
        if (string.IsNullOrWhiteSpace(options.StagingDirectory) || !Path.IsPathFullyQualified(options.StagingDirectory))
            failures.Add($"AgentOptions.StagingDirectory '{options.StagingDirectory}' is not a full path; see --staging-dir.");
        if (options.KeepStaged <= TimeSpan.Zero)
            failures.Add($"AgentOptions.KeepStaged is {options.KeepStaged}: it must be positive.");
        if (options.StagingLimit <= 0)
            failures.Add($"AgentOptions.StagingLimit is {options.StagingLimit}: it must be positive; see --staging-limit.");
        return failures.Count == 0 ? ValidateOptionsResult.Success : ValidateOptionsResult.Fail(failures);
    }
}

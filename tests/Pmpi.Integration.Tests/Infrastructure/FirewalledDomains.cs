using System.Security.Cryptography;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>
/// Two administrative domains behind a firewall, built from Linux network namespaces (names prefixed pmpi-gw-):
/// <code>
///   domain a (ns …-a)                    wan (ns …-w)                    domain b (ns …-b)
///   agent a1 10.201.1.2                  forwards only TCP to            agent b1 10.201.2.2
///   gateway 10.201.10.1:7400  ── veth ──  the two gateway ports  ── veth ── gateway 10.201.20.1:7400
///        │ 10.201.1.0/24                                                      │ 10.201.2.0/24
///        └──────────────── control (ns …-c): master 10.201.9.1:7300 ──────────┘  (no forwarding)
/// </code>
/// Every direct packet between a and b is dropped (iptables in both domains; the control namespace does not forward
/// and the wan forwards nothing but the gateway ports, or, as if b were behind NAT, only a's), so their ranks can meet
/// only through the gateways. The
/// addresses are those of examples/jobs/two-domains.xml. Disposing kills every process started here (by id) and
/// deletes the namespaces, which takes their links, routes and firewall rules with them.
/// </summary>
internal sealed class FirewalledDomains : IAsyncDisposable
{
    public const string AgentA = "10.201.1.2", AgentB = "10.201.2.2", GatewayA = "10.201.10.1", GatewayB = "10.201.20.1", Master = "10.201.9.1";
    public const int AgentPort = 7300, GatewayPort = 7400;

    private readonly string _prefix = $"pmpi-gw-{Convert.ToHexStringLower(RandomNumberGenerator.GetBytes(2))}";
    private readonly List<string> _namespaces = [];
    private readonly List<IAsyncDisposable> _processes = [];

    private readonly bool _bAcceptsNothing;

    private FirewalledDomains(string credentials, bool bAcceptsNothing) => (Credentials, _bAcceptsNothing) = (credentials, bAcceptsNothing);

    /// <summary>The cluster credential every process here uses: its certificates name all the addresses above.</summary>
    public string Credentials { get; }

    public string A => $"{_prefix}-a";
    public string B => $"{_prefix}-b";
    public string Control => $"{_prefix}-c";
    public string Wan => $"{_prefix}-w";

    /// <summary>Whether this machine can build it: Linux, root, ip and iptables.</summary>
    public static string? Unavailable() =>
        !OperatingSystem.IsLinux() ? "Linux only: network namespaces."
        : System.Environment.UserName != "root" ? "Needs root, to make network namespaces and firewall rules."
        : !File.Exists("/usr/sbin/ip") && !File.Exists("/sbin/ip") ? "ip is missing (Debian: iproute2)."
        : !File.Exists("/usr/sbin/iptables") && !File.Exists("/sbin/iptables") ? "iptables is missing (Debian: iptables)."
        : null;

    /// <summary>Builds the namespaces, links, routes and firewall; on any failure removes what it made.</summary>
    /// <param name="credentials">The cluster credential's directory.</param>
    /// <param name="bAcceptsNothing">
    /// Whether the wan also drops every connection to b's gateway (as NAT would): b then reaches a's gateway, and
    /// nothing reaches b.
    /// </param>
    public static async Task<FirewalledDomains> CreateAsync(string credentials, bool bAcceptsNothing = false)
    {
        var network = new FirewalledDomains(credentials, bAcceptsNothing);
        try
        {
            await network.BuildAsync().ConfigureAwait(false);
            return network;
        }
        catch
        {
            await network.DisposeAsync().ConfigureAwait(false);
            throw;
        }
    }

    private async Task BuildAsync()
    {
        foreach (var ns in new[] { A, B, Control, Wan })
        {
            await Ip("netns", "add", ns).ConfigureAwait(false);
            _namespaces.Add(ns);
            await Ip("-n", ns, "link", "set", "lo", "up").ConfigureAwait(false);
        }
        await LinkAsync(A, "ac", "10.201.1.2/24", Control, "ca", "10.201.1.1/24").ConfigureAwait(false);
        await LinkAsync(B, "bc", "10.201.2.2/24", Control, "cb", "10.201.2.1/24").ConfigureAwait(false);
        await LinkAsync(A, "aw", "10.201.10.1/24", Wan, "wa", "10.201.10.2/24").ConfigureAwait(false);
        await LinkAsync(B, "bw", "10.201.20.1/24", Wan, "wb", "10.201.20.2/24").ConfigureAwait(false);
        // The master's address, reached from each domain over its own control link.
        await Ip("-n", Control, "addr", "add", $"{Master}/32", "dev", "lo").ConfigureAwait(false);
        await Ip("-n", A, "route", "add", $"{Master}/32", "via", "10.201.1.1").ConfigureAwait(false);
        await Ip("-n", B, "route", "add", $"{Master}/32", "via", "10.201.2.1").ConfigureAwait(false);
        // Each domain reaches the other's gateway across the wan.
        await Ip("-n", A, "route", "add", "10.201.20.0/24", "via", "10.201.10.2").ConfigureAwait(false);
        await Ip("-n", B, "route", "add", "10.201.10.0/24", "via", "10.201.20.2").ConfigureAwait(false);
        // The master registers jobs with the gateways over its control links (the gateways' wan addresses are their own).
        await Ip("-n", Control, "route", "add", $"{GatewayA}/32", "via", AgentA).ConfigureAwait(false);
        await Ip("-n", Control, "route", "add", $"{GatewayB}/32", "via", AgentB).ConfigureAwait(false);
        await Exec(Wan, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1").ConfigureAwait(false);

        // The firewall: the wan forwards only connections to the gateway ports; each domain drops the other's LAN.
        await Iptables(Wan, "-P", "FORWARD", "DROP").ConfigureAwait(false);
        await Iptables(Wan, "-A", "FORWARD", "-m", "conntrack", "--ctstate", "ESTABLISHED,RELATED", "-j", "ACCEPT").ConfigureAwait(false);
        foreach (var gateway in _bAcceptsNothing ? [GatewayA] : new[] { GatewayA, GatewayB })
            await Iptables(Wan, "-A", "FORWARD", "-p", "tcp", "-d", gateway, "--dport", $"{GatewayPort}", "--syn", "-j", "ACCEPT").ConfigureAwait(false);
        foreach (var (ns, other) in new[] { (A, "10.201.2.0/24"), (B, "10.201.1.0/24") })
        {
            await Iptables(ns, "-A", "OUTPUT", "-d", other, "-j", "DROP").ConfigureAwait(false);
            await Iptables(ns, "-A", "INPUT", "-s", other, "-j", "DROP").ConfigureAwait(false);
        }
    }

    /// <summary>Starts `pmpi ARGUMENTS` in namespace <paramref name="ns"/> with this network's credential; killed on dispose.</summary>
    public ChildProcess Pmpi(string ns, params string[] arguments)
    {
        var process = ChildProcess.Start("ip", ["netns", "exec", ns, .. PmpiCli.Command, .. arguments], Environment());
        _processes.Add(process);
        return process;
    }

    /// <summary>Starts `pmpi agent` for node <paramref name="address"/> of <paramref name="domain"/> in <paramref name="ns"/>; returns once it listens.</summary>
    public async Task<ChildProcess> StartAgentAsync(string ns, string address, string? domain, int slots)
    {
        string[] domainOption = domain is null ? [] : ["--domain", domain];
        var agent = Pmpi(ns, ["agent", "--bind", address, "--port", $"{AgentPort}", "--rank-address", address == "0.0.0.0" ? Master : address, "--slots", $"{slots}", .. domainOption]);
        await agent.WaitForLineAsync(line => line.StartsWith("pmpi agent listening on ", StringComparison.Ordinal), PmpiCli.Timeout, "its listening line").ConfigureAwait(false);
        return agent;
    }

    /// <summary>Starts `pmpi gateway --domain <paramref name="domain"/> OPTIONS` in <paramref name="ns"/> on every address; returns once it listens.</summary>
    public async Task<ChildProcess> StartGatewayAsync(string ns, string domain, params string[] options)
    {
        var gateway = Pmpi(ns, ["gateway", "--domain", domain, "--bind", "0.0.0.0", "--port", $"{GatewayPort}", .. options]);
        await gateway.WaitForLineAsync(line => line.StartsWith("pmpi gateway listening on ", StringComparison.Ordinal), PmpiCli.Timeout, "its listening line").ConfigureAwait(false);
        return gateway;
    }

    /// <summary>Runs `pmpi ARGUMENTS` in <paramref name="ns"/> to its end.</summary>
    public async Task<(int ExitCode, string Transcript, IReadOnlyList<string> Stdout)> RunAsync(string ns, TimeSpan timeout, params string[] arguments)
    {
        var process = Pmpi(ns, arguments);
        int code = await process.WaitForExitAsync(timeout).ConfigureAwait(false);
        return (code, process.Transcript, process.Stdout);
    }

    public async ValueTask DisposeAsync()
    {
        foreach (var process in _processes) await process.DisposeAsync().ConfigureAwait(false);
        _processes.Clear();
        foreach (var ns in _namespaces)
        {
            try
            {
                await Ip("netns", "del", ns).ConfigureAwait(false);
            }
            catch (InvalidOperationException)
            {
                // Reported by the test's failure already; the others are still removed.
            }
        }
        _namespaces.Clear();
    }

    private Dictionary<string, string?> Environment() => PmpiCli.WithCredential(new Dictionary<string, string?> { [Rpc.Security.ClusterCredentials.EnvironmentVariable] = Credentials });

    private async Task LinkAsync(string ns1, string name1, string address1, string ns2, string name2, string address2)
    {
        await Ip("link", "add", $"{_prefix}-{name1}", "netns", ns1, "type", "veth", "peer", "name", $"{_prefix}-{name2}", "netns", ns2).ConfigureAwait(false);
        await Ip("-n", ns1, "addr", "add", address1, "dev", $"{_prefix}-{name1}").ConfigureAwait(false);
        await Ip("-n", ns2, "addr", "add", address2, "dev", $"{_prefix}-{name2}").ConfigureAwait(false);
        await Ip("-n", ns1, "link", "set", $"{_prefix}-{name1}", "up").ConfigureAwait(false);
        await Ip("-n", ns2, "link", "set", $"{_prefix}-{name2}", "up").ConfigureAwait(false);
    }

    /// <summary>Adds a rule (or sets a policy) in <paramref name="ns"/>; rules carry this network's prefix as their comment.</summary>
    private Task Iptables(string ns, params string[] rule) => Exec(ns, rule[0] == "-P" ? ["iptables", .. rule] : ["iptables", .. rule, "-m", "comment", "--comment", _prefix]);

    private static Task Exec(string ns, params string[] command) => Ip(["netns", "exec", ns, .. command]);

    private static async Task Ip(params string[] arguments)
    {
        var (code, transcript) = await ChildProcess.RunAsync("ip", arguments, TimeSpan.FromSeconds(30)).ConfigureAwait(false);
        if (code != 0) throw new InvalidOperationException($"ip {string.Join(' ', arguments)} exited with {code}.\n{transcript}");
    }
}

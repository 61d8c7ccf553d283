using System.Xml.Linq;

namespace Pmpi.Integration.Tests.Infrastructure;

/// <summary>Computation files for the tests, built as XML so paths with any characters stay well-formed.</summary>
internal static class Computation
{
    private static readonly XNamespace Ns = "urn:pmpi:computation:v1";

    /// <summary>A computation of <paramref name="count"/> test ranks running <paramref name="scenario"/>, on the given nodes (none: the local agent).</summary>
    public static string Of(string name, int count, string[] scenario, params (string Name, string Agent, int Slots)[] nodes) =>
        Of(name, TimeSpan.FromMinutes(2), count, scenario, nodes);

    /// <summary>The same with the computation's own <paramref name="timeout"/>.</summary>
    public static string Of(string name, TimeSpan timeout, int count, string[] scenario, params (string Name, string Agent, int Slots)[] nodes) =>
        Of(name, timeout, nodes, Ranks(PmpiCli.TestRanksDll, count, node: null, scenario));

    /// <summary>A computation of the given groups of ranks (<see cref="Ranks"/>) on the given nodes.</summary>
    public static string Of(string name, TimeSpan timeout, (string Name, string Agent, int Slots)[] nodes, params XElement[] groups)
    {
        var root = new XElement(Ns + "computation", new XAttribute("name", name), new XAttribute("timeout", timeout.ToString("c", System.Globalization.CultureInfo.InvariantCulture)),
            nodes.Select(node => new XElement(Ns + "node", new XAttribute("name", node.Name), new XAttribute("agent", node.Agent), new XAttribute("slots", node.Slots))),
            groups);
        return new XDocument(root).ToString();
    }

    /// <summary>A group of <paramref name="count"/> ranks of <paramref name="program"/>, pinned to <paramref name="node"/> when given.</summary>
    public static XElement Ranks(string program, int count, string? node, params string[] arguments) =>
        new(Ns + "ranks", new XAttribute("program", program), new XAttribute("count", count), node is null ? null : new XAttribute("node", node),
            arguments.Select(argument => new XElement(Ns + "arg", argument)));
}

using System.Text.RegularExpressions;
using System.Xml.Linq;
using Pmpi.Agent.Computation;

namespace Pmpi.Cli;

/// <summary>
/// The computation that mpirun's form, <c>pmpi run [-n N] program [arguments]</c>, stands for: one group of ranks
/// running one program, with the variables <c>-x</c> passes, on the embedded agent (or the master's own), or on the
/// nodes of the hosts <c>-H</c> or <c>--hostfile</c> name, mapped as <c>--map-by</c> says.
/// </summary>
internal static partial class SpmdComputation
{
    /// <summary>The computation file's text.</summary>
    public static string Build(string program, int count, bool oversubscribe, IReadOnlyList<string> arguments, IReadOnlyDictionary<string, string> environment,
        IReadOnlyList<(string Name, string Agent, int Slots)> nodes, RankMapping mapping)
    {
        XNamespace ns = ComputationFile.Namespace;
        var ranks = new XElement(ns + "ranks", new XAttribute("program", program), new XAttribute("count", count),
            arguments.Select(argument => new XElement(ns + "arg", argument)));
        return new XDocument(new XElement(ns + "computation", new XAttribute("name", JobName(program)),
            oversubscribe ? new XAttribute("oversubscribe", "true") : null,
            mapping == RankMapping.Node ? new XAttribute("map-by", "node") : null,
            nodes.Select(node => new XElement(ns + "node", new XAttribute("name", node.Name), new XAttribute("agent", node.Agent), new XAttribute("slots", node.Slots))),
            environment.Select(variable => new XElement(ns + "env", new XAttribute("name", variable.Key), new XAttribute("value", variable.Value))),
            ranks)).ToString();
    }

    /// <summary>
    /// Reads <c>-x</c>'s values into the ranks' variables: <c>VAR=value</c>, or <c>VAR</c> for this process's own
    /// value; a later one of a name wins. Null with <paramref name="error"/> naming the value that cannot be read.
    /// </summary>
    public static Dictionary<string, string>? ReadExports(IEnumerable<string> exports, out string? error)
    {
        error = null;
        var environment = new Dictionary<string, string>(StringComparer.Ordinal);
        foreach (var export in exports)
        {
            var parts = export.Split('=', 2);
            string name = parts[0];
            string? value = parts.Length == 2 ? parts[1] : System.Environment.GetEnvironmentVariable(name);
            error = !VariableName().IsMatch(name) ? $"pmpi run: -x {export}: '{name}' is not a variable name (letters, digits and '_', not starting with a digit)."
                : name.StartsWith("PMPI_", StringComparison.OrdinalIgnoreCase) ? $"pmpi run: -x {export}: the PMPI_* variables are PMPI's own; it sets them for every rank."
                : value is null ? $"pmpi run: -x {name}: {name} is not set here; give it a value with -x {name}=value."
                : null;
            if (error is not null) return null;
            environment[name] = value!;
        }
        return environment;
    }

    /// <summary>The job's name: the program's file name without .dll or .exe (a native executable's name may hold dots of its own).</summary>
    public static string JobName(string program)
    {
        var name = Path.GetFileName(program);
        return NameOf(Path.GetExtension(name).ToLowerInvariant() is ".dll" or ".exe" ? Path.GetFileNameWithoutExtension(name) : name);
    }

    /// <summary><paramref name="text"/> made a computation name: other characters become '-', and it starts and ends with a letter or digit.</summary>
    public static string NameOf(string text)
    {
        var name = NotInName().Replace(text, "-");
        name = (name.Length > MaxNameLength ? name[..MaxNameLength] : name).Trim('.', '_', '-');
        return name.Length > 0 ? name : "job";
    }

    /// <summary>The longest name computation.xsd allows.</summary>
    private const int MaxNameLength = 64;

    [GeneratedRegex("^[A-Za-z_][A-Za-z0-9_]*$")]
    private static partial Regex VariableName();

    [GeneratedRegex("[^A-Za-z0-9._-]")]
    private static partial Regex NotInName();
}

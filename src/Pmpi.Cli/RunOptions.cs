using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using Pmpi.Agent.Hosting;

namespace Pmpi.Cli;

/// <summary>
/// The options of `pmpi run`, spelled as mpirun spells them where mpirun has them (docs/mpirun.md has the table), and
/// <see cref="EndAtProgram"/>, which makes everything after the program the program's own before System.CommandLine
/// parses, and names an option it does not know instead of taking it for the program.
/// </summary>
internal sealed class RunOptions
{
    /// <summary>The option of the SPMD form, <c>-n N</c>.</summary>
    public const string RanksOption = "-n";

    public RunOptions()
    {
        var defaults = new AgentOptions();
        HeartbeatTimeout = LivenessOptions.HeartbeatTimeout(defaults);
        RegisterTimeout = LivenessOptions.RegisterTimeout(defaults);
        Links.AcceptOnlyFromAmong("shared", "network");
        BindTo.AcceptOnlyFromAmong("core", "none");
        MapBy.AcceptOnlyFromAmong("slot", "node");
    }

    public Argument<string> Target { get; } = new("target")
    {
        Description = "A computation file (.xml), or a program: a .dll, an executable or a script, looked for in the current directory, then on PATH.",
    };

    public Argument<string[]> ProgramArguments { get; } = new("arguments") { Description = "The program's own arguments.", Arity = ArgumentArity.ZeroOrMore };

    public Option<int?> Ranks { get; } = new(RanksOption, "-np", "--np", "--ranks")
    {
        HelpName = "N",
        Description = "Run the program on this many ranks; without it, one per slot (logical core), as mpirun does.",
        CustomParser = RankCount,
    };

    public Option<string[]> Export { get; } = new("-x")
    {
        HelpName = "VAR[=value]",
        Description = "VAR=value sets VAR for every rank; VAR alone passes on this process's own value (which then never appears in a command line). Repeatable.",
    };

    public Option<string[]> Hosts { get; } = new("-H", "--host")
    {
        HelpName = "host[:slots],...",
        Description = "Run the program on these hosts' agents (each with its slots, 1 when not given): this machine's are the embedded agent; others need --master. Repeatable.",
    };

    public Option<string?> HostFile { get; } = new("--hostfile", "--machinefile")
    {
        HelpName = "FILE",
        Description = "Open MPI's hostfile: a host per line, with slots=N (this machine's cores, another host's 1, when not given), max_slots=N (read, not enforced) and PMPI's port=N; # comments.",
    };

    public Option<string?> MapBy { get; } = new("--map-by")
    {
        Description = "slot (the default): fill each host's slots before the next's; node: one rank per host in turn.",
    };

    public Option<string?> Master { get; } = new("--master")
    {
        Description = "Submit to the master of a running agent (host:port, or https://host:port) instead of an embedded one.",
    };

    public Option<bool> Oversubscribe { get; } = new("--oversubscribe") { Description = "Allow more ranks than slots (at most 8 per slot)." };

    public Option<double> HeartbeatTimeout { get; }

    public Option<double> RegisterTimeout { get; }

    public Option<bool> ShowRoutes { get; } = new("--show-routes")
    {
        Description = "Print the route between every pair of ranks, as the ranks will choose it from the rank table, and exit without running.",
    };

    public Option<string> Links { get; } = new("--links")
    {
        Description = "How ranks of one node reach each other: shared (shared memory, the default) or network (as ranks of different nodes do), to compare or to work around.",
        DefaultValueFactory = _ => "shared",
    };

    public Option<string> BindTo { get; } = new("--bind-to")
    {
        Description = "core (the default): each rank runs on a core of its own where its node has one for each of the job's ranks there, as mpirun binds; none: ranks run where the scheduler puts them.",
        DefaultValueFactory = _ => "core",
    };

    public Option<bool> ReportBindings { get; } = new("--report-bindings")
    {
        Description = "Each rank says on its standard error which processor it is bound to, or why it is not (ranks that do not run PMPI say nothing).",
    };

    public Option<bool> TagOutput { get; } = new("--tag-output")
    {
        Description = "Tag each line of the ranks' output with its rank, \"[3] \": the default, since the ranks' lines interleave.",
    };

    public Option<bool> NoTagOutput { get; } = new("--no-tag-output")
    {
        Description = "Print the ranks' output as they wrote it, without tags: for output that is data, or a job of one rank.",
    };

    public Option<bool> Stage { get; } = new("--stage")
    {
        Description = "Ship each program's directory to the nodes that run it (as stage=\"true\" does for one <ranks> group): by content, checked against its hash and the job's ticket, kept by each agent for later jobs.",
    };

    public SecurityOptions Security { get; } = new();

    /// <summary>The `run` command with every option and argument.</summary>
    public Command CreateCommand()
    {
        var command = new Command("run", "Run a computation file, or a program on many ranks as mpirun does, and stream its output.")
        {
            Target, ProgramArguments, Ranks, Export, Hosts, HostFile, MapBy, Master, Oversubscribe, HeartbeatTimeout, RegisterTimeout, ShowRoutes, Links, BindTo, ReportBindings, TagOutput, NoTagOutput, Stage,
        };
        Security.AddTo(command);
        return command;
    }

    /// <summary>-n's value, or an error in its terms rather than .NET's (which names the type it parses into).</summary>
    private static int? RankCount(ArgumentResult result)
    {
        string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : "";
        if (int.TryParse(text, NumberStyles.AllowLeadingSign, CultureInfo.InvariantCulture, out int count)) return count;
        result.AddError($"-n {text}: expected a number of ranks.");
        return null;
    }

    /// <summary>Whether <paramref name="target"/> names a computation file rather than a program.</summary>
    public static bool IsComputationFile(string target) => target.EndsWith(".xml", StringComparison.OrdinalIgnoreCase);

    /// <summary>
    /// Prepares a `pmpi run` command line for System.CommandLine, as mpirun reads its own: pmpi's options end at the
    /// program, and everything after it is the program's, even what looks like one of pmpi's options (<c>-n</c>,
    /// <c>--master</c>, ...), so a <c>--</c> is put right after the program unless one is there. Options may follow
    /// a computation file. Other commands' lines are returned as they are.
    /// </summary>
    /// <returns>The command line to parse, or null with <paramref name="error"/> naming an option `pmpi run` does not have.</returns>
    public static string[]? EndAtProgram(Command run, string[] args, out string? error)
    {
        ArgumentNullException.ThrowIfNull(run);
        ArgumentNullException.ThrowIfNull(args);
        error = null;
        if (args.Length == 0 || args[0] != run.Name) return args;
        var options = run.Options.Concat(run.Parents.OfType<Command>().SelectMany(parent => parent.Options).Where(option => option.Recursive)).ToList();
        bool computationFile = false;
        for (int i = 1; i < args.Length; i++)
        {
            string token = args[i];
            if (token == "--") return args;
            if (token.Length > 1 && token[0] == '-')
            {
                string name = token.Split('=', 2)[0];
                var option = options.FirstOrDefault(option => option.Name == name || option.Aliases.Contains(name));
                if (option is null)
                {
                    error = $"pmpi run: unknown option '{name}' (`pmpi run --help` lists them; everything after the program is the program's own).";
                    return null;
                }
                // An option that takes a value (not `--name=value`) owns the next token.
                if (name.Length == token.Length && option.ValueType != typeof(bool)) i++;
                continue;
            }
            // After a computation file, options still follow; other words are reported as arguments it cannot take.
            computationFile |= IsComputationFile(token);
            if (computationFile) continue;
            bool programHasArguments = i + 1 < args.Length && args[i + 1] != "--";
            return programHasArguments ? [.. args[..(i + 1)], "--", .. args[(i + 1)..]] : args;
        }
        return args;
    }
}

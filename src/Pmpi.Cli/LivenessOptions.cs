using System.CommandLine;
using System.CommandLine.Parsing;
using System.Globalization;
using Pmpi.Agent.Hosting;

namespace Pmpi.Cli;

/// <summary>The liveness flags `pmpi agent` and `pmpi run` share (<see cref="AgentOptions"/> states what they bound).</summary>
internal static class LivenessOptions
{
    /// <summary>--heartbeat-timeout: seconds a rank or an agent may be silent before its job is aborted.</summary>
    public static Option<double> HeartbeatTimeout(AgentOptions defaults) => new("--heartbeat-timeout")
    {
        Description = "Seconds a rank's runtime or an agent may send no heartbeat before the job is aborted naming it (a stopped or frozen process).",
        DefaultValueFactory = _ => defaults.HeartbeatTimeout.TotalSeconds,
        CustomParser = Seconds,
    };

    /// <summary>--register-timeout: seconds a job waits for all its ranks to register.</summary>
    public static Option<double> RegisterTimeout(AgentOptions defaults) => new("--register-timeout")
    {
        Description = "Seconds a job waits for all its ranks to register with the master before it is aborted naming the missing ones.",
        DefaultValueFactory = _ => defaults.RegistrationTimeout.TotalSeconds,
        CustomParser = Seconds,
    };

    /// <summary>A number of seconds, or an error in the option's terms rather than .NET's (which names the type it parses into).</summary>
    private static double Seconds(ArgumentResult result)
    {
        string text = result.Tokens.Count > 0 ? result.Tokens[0].Value : "";
        if (double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double seconds)) return seconds;
        result.AddError($"{(result.Parent as OptionResult)?.Option.Name} {text}: expected a number of seconds.");
        return 0;
    }
}

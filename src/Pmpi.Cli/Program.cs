// pmpi: run computations, serve as a node's agent, describe nodes, create cluster credentials.
using System.CommandLine;
using Pmpi.Cli;

var run = RunCommand.Create();
var root = new RootCommand("PMPI: MPI for .NET without native MPI.")
{
    run,
    AgentCommand.Create(),
    NodesCommand.Create(),
    ClusterCommand.Create(),
};
var parse = root.Parse(RunCommand.KeepProgramArguments(run, args));
var invocation = new InvocationConfiguration();
// `pmpi agent` leaves SIGTERM and Ctrl+C to the Generic Host, which kills the ranks and stops the server in order;
// System.CommandLine's own handler would end the process 2 s after the signal, stopped or not.
if (parse.CommandResult.Command.Name == AgentCommand.Name) invocation.ProcessTerminationTimeout = null;
return await parse.InvokeAsync(invocation);

// pmpi: run computations, serve as a node's agent or a domain's gateway, describe nodes, create cluster credentials.
using System.CommandLine;
using Pmpi.Cli;

var run = RunCommand.Create();
var root = new RootCommand("PMPI: MPI for .NET without native MPI.")
{
    run,
    AgentCommand.Create(),
    GatewayCommand.Create(),
    NodesCommand.Create(),
    ClusterCommand.Create(),
};
if (RunOptions.EndAtProgram(run, args, out var unknown) is not { } line)
{
    Console.Error.WriteLine(unknown);
    return 2;
}
var parse = root.Parse(line);
var invocation = new InvocationConfiguration();
// `pmpi agent` and `pmpi gateway` leave SIGTERM and Ctrl+C to the Generic Host, which kills the ranks and stops the
// server in order; System.CommandLine's own handler would end the process 2 s after the signal, stopped or not.
if (parse.CommandResult.Command.Name is AgentCommand.Name or GatewayCommand.Name) invocation.ProcessTerminationTimeout = null;
return await parse.InvokeAsync(invocation);

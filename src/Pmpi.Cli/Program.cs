// pmpi: run computations, serve as a node's agent, describe nodes.
using System.CommandLine;
using Pmpi.Cli;

var root = new RootCommand("PMPI: MPI for .NET without native MPI.")
{
    RunCommand.Create(),
    AgentCommand.Create(),
    NodesCommand.Create(),
};
return await root.Parse(args).InvokeAsync();

namespace Pmpi.Rpc.Routing;

/// <summary>A rank table that gives some pair of ranks no route (<see cref="JobRoutes"/>); the message names them.</summary>
public sealed class RouteException(string message) : Exception(message);

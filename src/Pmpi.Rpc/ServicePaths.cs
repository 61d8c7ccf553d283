namespace Pmpi.Rpc;

/// <summary>The gRPC method paths of PMPI's services (proto/pmpi/v1), in one place for servers and clients.</summary>
public static class ServicePaths
{
    /// <summary>Rank-to-rank transport (transport.proto).</summary>
    public const string Connect = "/pmpi.v1.RankTransport/Connect";

    /// <summary>Agent.GetNodeInfo (agent.proto).</summary>
    public const string GetNodeInfo = "/pmpi.v1.Agent/GetNodeInfo";

    /// <summary>Agent.Launch (agent.proto).</summary>
    public const string Launch = "/pmpi.v1.Agent/Launch";

    /// <summary>Agent.Kill (agent.proto).</summary>
    public const string Kill = "/pmpi.v1.Agent/Kill";

    /// <summary>Agent.MissingFiles (agent.proto).</summary>
    public const string MissingFiles = "/pmpi.v1.Agent/MissingFiles";

    /// <summary>Agent.Upload (agent.proto).</summary>
    public const string Upload = "/pmpi.v1.Agent/Upload";

    /// <summary>Master.Submit (master.proto).</summary>
    public const string Submit = "/pmpi.v1.Master/Submit";

    /// <summary>JobControl.Register (master.proto).</summary>
    public const string Register = "/pmpi.v1.JobControl/Register";

    /// <summary>JobControl.Abort (master.proto).</summary>
    public const string Abort = "/pmpi.v1.JobControl/Abort";

    /// <summary>JobControl.Spawn (master.proto).</summary>
    public const string Spawn = "/pmpi.v1.JobControl/Spawn";

    /// <summary>JobControl.Linked (master.proto).</summary>
    public const string Linked = "/pmpi.v1.JobControl/Linked";

    /// <summary>Gateway.RegisterJob (gateway.proto).</summary>
    public const string RegisterJob = "/pmpi.v1.Gateway/RegisterJob";

    /// <summary>Gateway.RemoveJob (gateway.proto).</summary>
    public const string RemoveJob = "/pmpi.v1.Gateway/RemoveJob";

    /// <summary>Gateway.GetStatus (gateway.proto).</summary>
    public const string GatewayStatus = "/pmpi.v1.Gateway/GetStatus";
}

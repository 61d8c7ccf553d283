using static Pmpi.Hosting.Pmi.PmiCommand;

namespace Pmpi.Hosting.Pmi;

/// <summary>
/// PMI-2, as MPICH's client (<c>src/pmi/pmi2/simple/simple2pmi.c</c>) speaks it and Slurm's <c>--mpi=pmi2</c> and
/// Hydra serve it: one PMI-1 line announcing version 2, then length-prefixed commands, <c>fullinit</c> first.
/// </summary>
internal sealed class Pmi2Client(PmiConnection connection) : PmiClient(connection)
{
    protected override void Initialize(Func<string, string?> read)
    {
        Connection.Send(new PmiCommand("init", Attribute("pmi_version", 2), Attribute("pmi_subversion", 0)));
        Expect(Connection.ReceiveLine(), "response_to_init", "init");
        // What MPICH sends: the job id when the launcher set one (Slurm requires it), and this process's id, which a
        // dialed server learns only from here (Hydra's -pmi-port sets PMI_ID; otherwise PMI_RANK).
        var attributes = new List<KeyValuePair<string, string>>();
        if (read(PmiEnvironment.JobId) is { Length: > 0 } job) attributes.Add(Attribute("pmijobid", job));
        var id = read(PmiEnvironment.Id) is { Length: > 0 } ? PmiEnvironment.Id : PmiEnvironment.Rank;
        attributes.Add(Attribute("pmirank", Integer(read, id, minimum: 0)));
        attributes.Add(Attribute("threaded", "FALSE"));
        var init = Request(new PmiCommand("fullinit", attributes), "fullinit-response");
        Rank = init.Integer("rank");
        Size = init.Integer("size");
        JobId = Request(new PmiCommand("job-getid"), "job-getid-response")["jobid"]
            ?? throw new MpiException(ErrorClass.Transport, $"The PMI server ({Connection.Source}) named no job id.");
    }

    protected override void PutValue(string key, string value) =>
        Request(new PmiCommand("kvs-put", Attribute("key", key), Attribute("value", value)), "kvs-put-response");

    protected override void FenceAll() => Request(new PmiCommand("kvs-fence"), "kvs-fence-response");

    protected override string GetValue(string key)
    {
        var response = Request(new PmiCommand("kvs-get", Attribute("jobid", JobId), Attribute("srcid", -1), Attribute("key", key)), "kvs-get-response");
        return string.Equals(response["found"], "TRUE", StringComparison.OrdinalIgnoreCase) && response["value"] is { } value
            ? value
            : throw new MpiException(ErrorClass.Transport, $"The PMI server ({Connection.Source}) has no value for '{key}'.");
    }

    protected override void SendAbort(int exitCode, string message) =>
        Connection.SendFrame(new PmiCommand("abort", Attribute("isworld", "TRUE"), Attribute("msg", message.Replace(';', ','))));

    protected override void SendFinalize() => Request(new PmiCommand("finalize"), "finalize-response");

    private PmiCommand Request(PmiCommand command, string response)
    {
        Connection.SendFrame(command);
        return Expect(Connection.ReceiveFrame(), response, command.Name);
    }
}

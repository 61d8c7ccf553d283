using static Pmpi.Hosting.Pmi.PmiCommand;

namespace Pmpi.Hosting.Pmi;

/// <summary>
/// PMI-1, as MPICH's simple PMI client speaks it (<c>src/pmi/simple/simple_pmi.c</c>): one line per command and per
/// response. Through an inherited socket, rank and size are in <c>PMI_RANK</c> and <c>PMI_SIZE</c>; through a dialed
/// port, the server tells them after <c>cmd=initack pmiid=PMI_ID</c>.
/// </summary>
internal sealed class Pmi1Client(PmiConnection connection) : PmiClient(connection)
{
    protected override void Initialize(Func<string, string?> read)
    {
        if (Connection.Dialed)
        {
            Connection.Send(new PmiCommand("initack", Attribute("pmiid", Integer(read, PmiEnvironment.Id, minimum: 0))));
            Expect(Connection.ReceiveLine(), "initack", "initack");
            // Then "cmd=set size=N", "cmd=set rank=R", "cmd=set debug=D", in that order (simple_pmi.c, PMII_Set_from_port).
            Size = Expect(Connection.ReceiveLine(), "set", "initack").Integer("size");
            Rank = Expect(Connection.ReceiveLine(), "set", "initack").Integer("rank");
            Expect(Connection.ReceiveLine(), "set", "initack");
        }
        else
        {
            Size = Integer(read, PmiEnvironment.Size, minimum: 1);
            Rank = Integer(read, PmiEnvironment.Rank, minimum: 0);
        }
        Request(new PmiCommand("init", Attribute("pmi_version", 1), Attribute("pmi_subversion", 1)), "response_to_init");
        JobId = Request(new PmiCommand("get_my_kvsname"), "my_kvsname")["kvsname"]
            ?? throw new MpiException(ErrorClass.Transport, $"The PMI server ({Connection.Source}) named no key-value space.");
    }

    protected override void PutValue(string key, string value) =>
        Request(new PmiCommand("put", Attribute("kvsname", JobId), Attribute("key", key), Attribute("value", value)), "put_result");

    protected override void FenceAll() => Request(new PmiCommand("barrier_in"), "barrier_out");

    protected override string GetValue(string key) =>
        Request(new PmiCommand("get", Attribute("kvsname", JobId), Attribute("key", key)), "get_result")["value"]
        ?? throw new MpiException(ErrorClass.Transport, $"The PMI server ({Connection.Source}) has no value for '{key}'.");

    // MPICH 4.0's client sends the code alone: a message would need escaping that older servers do not undo.
    protected override void SendAbort(int exitCode, string message) => Connection.Send(new PmiCommand("abort", Attribute("exitcode", exitCode)));

    protected override void SendFinalize() => Request(new PmiCommand("finalize"), "finalize_ack");

    private PmiCommand Request(PmiCommand command, string response)
    {
        Connection.Send(command);
        return Expect(Connection.ReceiveLine(), response, command.Name);
    }
}

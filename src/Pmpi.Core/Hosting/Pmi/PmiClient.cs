using System.Globalization;

namespace Pmpi.Hosting.Pmi;

/// <summary>
/// A rank's side of the launcher's PMI: who it is (rank, size, the job's name) and the job's key-value space, where
/// each rank puts what its peers need, then all meet in a fence, then each gets the others'. PMI-1 and PMI-2 are two
/// wire forms of the same calls (<see cref="Pmi1Client"/>, <see cref="Pmi2Client"/>). Calls are serialised: PMI is
/// one request and its response at a time.
/// </summary>
internal abstract class PmiClient : IDisposable
{
    private readonly Lock _gate = new();
    private bool _finalized;

    protected PmiClient(PmiConnection connection) => Connection = connection;

    protected PmiConnection Connection { get; }

    /// <summary>This process's rank in the job, from 0.</summary>
    public int Rank { get; protected set; }

    /// <summary>The number of processes in the job.</summary>
    public int Size { get; protected set; }

    /// <summary>The job's name: PMI-1's key-value space name, PMI-2's job id. The same on every rank, and the launcher's own.</summary>
    public string JobId { get; protected set; } = "";

    /// <summary>
    /// Connects to the launcher's PMI server as the environment says and initializes in the protocol
    /// <see cref="PmiEnvironment.Version"/> names; null when the process was not started with PMI.
    /// </summary>
    /// <exception cref="MpiException">The variables are malformed, or the server refused or closed the connection.</exception>
    public static PmiClient? Connect(Func<string, string?> read)
    {
        ArgumentNullException.ThrowIfNull(read);
        var version = read(PmiEnvironment.Version);
        if (version is not (null or "" or "1" or "2")) throw PmiEnvironment.Malformed(PmiEnvironment.Version, version, "1 or 2");
        var connection = PmiConnection.Open(read);
        if (connection is null) return null;
        try
        {
            PmiClient client = version == "2" ? new Pmi2Client(connection) : new Pmi1Client(connection);
            client.Initialize(read);
            if (client.Size < 1 || client.Rank < 0 || client.Rank >= client.Size)
                throw new MpiException(ErrorClass.Transport, $"The PMI server ({connection.Source}) said this is rank {client.Rank} of {client.Size}.");
            return client;
        }
        catch
        {
            connection.Dispose();
            throw;
        }
    }

    /// <summary>Publishes <paramref name="value"/> under <paramref name="key"/>; peers see it after the next <see cref="Fence"/>.</summary>
    public void Put(string key, string value)
    {
        lock (_gate) PutValue(key, value);
    }

    /// <summary>Waits until every rank of the job has reached its fence; what each put before it is then visible to all.</summary>
    public void Fence()
    {
        lock (_gate) FenceAll();
    }

    /// <summary>The value a rank put under <paramref name="key"/> before the last fence.</summary>
    /// <exception cref="MpiException">Transport: no rank put it.</exception>
    public string Get(string key)
    {
        lock (_gate) return GetValue(key);
    }

    /// <summary>
    /// Asks the launcher to end the whole job with <paramref name="exitCode"/> (no answer is awaited: the launcher
    /// kills this process too). Does nothing once finished, or while another call holds the connection for long: the
    /// rank's exit code still tells the launcher.
    /// </summary>
    public void Abort(int exitCode, string message)
    {
        if (!_gate.TryEnter(TimeSpan.FromSeconds(1))) return;
        try
        {
            if (!_finalized) SendAbort(exitCode, message);
        }
        catch (MpiException)
        {
            // The launcher is gone or closed the connection; the exit code is all that is left to say.
        }
        finally
        {
            _gate.Exit();
        }
    }

    /// <summary>Tells the launcher this process is done with PMI (PMI_Finalize); once.</summary>
    public void Finish()
    {
        lock (_gate)
        {
            if (_finalized) return;
            _finalized = true;
            SendFinalize();
        }
    }

    public void Dispose() => Connection.Dispose();

    protected abstract void Initialize(Func<string, string?> read);

    protected abstract void PutValue(string key, string value);

    protected abstract void FenceAll();

    protected abstract string GetValue(string key);

    protected abstract void SendAbort(int exitCode, string message);

    protected abstract void SendFinalize();

    /// <summary>The response, once it is the one expected and reports success.</summary>
    /// <exception cref="MpiException">Transport: another command came, or the server reported a failure.</exception>
    protected PmiCommand Expect(PmiCommand response, string name, string request)
    {
        ArgumentNullException.ThrowIfNull(response);
        if (response.Name != name)
            throw new MpiException(ErrorClass.Transport, $"The PMI server ({Connection.Source}) answered '{request}' with '{response}', not '{name}'.");
        if (!response.Succeeded)
            throw new MpiException(ErrorClass.Transport, $"The PMI server ({Connection.Source}) refused '{request}': {response.Reason ?? response.ToString()}");
        return response;
    }

    /// <summary>An integer variable the launcher sets.</summary>
    protected static int Integer(Func<string, string?> read, string name, int minimum)
    {
        ArgumentNullException.ThrowIfNull(read);
        var text = read(name);
        return int.TryParse(text, NumberStyles.None, CultureInfo.InvariantCulture, out var value) && value >= minimum
            ? value
            : throw PmiEnvironment.Malformed(name, text, $"an integer of at least {minimum}");
    }
}

using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using Pmpi.Hosting.Pmi;

namespace Pmpi.Tests.Hosting.Pmi;

/// <summary>
/// The PMI-2 conversation as Slurm's pmi2 plugin answers it, byte for byte as its source writes it
/// (<c>src/plugins/mpi/pmi2/agent.c</c> and <c>pmi2.c</c>): the init line answered with <c>rc</c> first, lengths
/// padded on the right, <c>found=TRUE</c>. Hydra and Slurm serve it for real in the integration tests
/// (<c>PmiLaunchTests</c>, <c>SlurmLaunchTests</c>); here the bytes a rank sends are pinned, down to the three
/// attributes Slurm requires of <c>fullinit</c>.
/// </summary>
public sealed class PmiClientTests
{
    private static readonly TimeSpan Timeout = TimeSpan.FromSeconds(30);

    [Fact]
    public async Task Connect_SlurmsPmi2Server_InitializesPutsFencesAndGets()
    {
        // Arrange: a server that checks what slurmstepd requires of fullinit and answers as it does.
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var requests = new List<string>();
        var server = Task.Run(async () =>
        {
            using var socket = await listener.AcceptSocketAsync().WaitAsync(Timeout);
            Assert.Equal("cmd=init pmi_version=2 pmi_subversion=0\n", Read(socket, until: '\n'));
            socket.Send("cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n"u8);
            string[] answers =
            [
                "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=1;size=2;appnum=-1;debugged=FALSE;pmiverbose=FALSE;",
                "cmd=job-getid-response;rc=0;jobid=7.0;",
                "cmd=kvs-put-response;rc=0;",
                "cmd=kvs-fence-response;rc=0;",
                "cmd=kvs-get-response;rc=0;found=TRUE;value=http://10.0.0.2:4000/|AB;",
                "cmd=kvs-get-response;rc=0;found=FALSE;",
                "cmd=finalize-response;rc=0;",
            ];
            foreach (var answer in answers)
            {
                int length = int.Parse(Read(socket, count: 6), CultureInfo.InvariantCulture);
                lock (requests) requests.Add(Read(socket, count: length));
                socket.Send(Encoding.ASCII.GetBytes(string.Format(CultureInfo.InvariantCulture, "{0,-6}{1}", answer.Length, answer)));
            }
        });
        var environment = new Dictionary<string, string>
        {
            ["PMI_PORT"] = $"127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}",
            ["PMI_ID"] = "1",
            ["PMI_JOBID"] = "7.0",
            ["PMPI_PMI_VERSION"] = "2",
        };

        // Act
        var (rank, size, job, found, missing) = await Task.Run(() =>
        {
            using var pmi = PmiClient.Connect(environment.GetValueOrDefault)!;
            pmi.Put("pmpi-endpoint-1", "http://10.0.0.3:4000/|CD");
            pmi.Fence();
            var found = pmi.Get("pmpi-endpoint-0");
            var missing = Assert.Throws<MpiException>(() => pmi.Get("absent"));
            pmi.Finish();
            return (pmi.Rank, pmi.Size, pmi.JobId, found, missing);
        }).WaitAsync(Timeout);
        await server.WaitAsync(Timeout);

        // Assert
        Assert.Equal((1, 2, "7.0"), (rank, size, job));
        Assert.Equal("http://10.0.0.2:4000/|AB", found);
        Assert.Contains("'absent'", missing.Message);
        Assert.Equal(
        [
            "cmd=fullinit;pmijobid=7.0;pmirank=1;threaded=FALSE;",
            "cmd=job-getid;",
            "cmd=kvs-put;key=pmpi-endpoint-1;value=http://10.0.0.3:4000/|CD;",
            "cmd=kvs-fence;",
            "cmd=kvs-get;jobid=7.0;srcid=-1;key=pmpi-endpoint-0;",
            "cmd=kvs-get;jobid=7.0;srcid=-1;key=absent;",
            "cmd=finalize;",
        ], requests);
    }

    [Fact]
    public async Task Connect_ServerRefusesInit_FailsWithItsReason()
    {
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var server = Task.Run(async () =>
        {
            using var socket = await listener.AcceptSocketAsync().WaitAsync(Timeout);
            Read(socket, until: '\n');
            socket.Send("cmd=response_to_init rc=1 pmi_version=1 pmi_subversion=1\n"u8);
        });
        var environment = new Dictionary<string, string>
        {
            ["PMI_PORT"] = $"127.0.0.1:{((IPEndPoint)listener.LocalEndpoint).Port}",
            ["PMI_ID"] = "0",
            ["PMPI_PMI_VERSION"] = "2",
        };

        var error = await Task.Run(() => Assert.Throws<MpiException>(() => PmiClient.Connect(environment.GetValueOrDefault))).WaitAsync(Timeout);
        await server.WaitAsync(Timeout);

        Assert.Equal(ErrorClass.Transport, error.ErrorClass);
        Assert.Contains("refused 'init'", error.Message);
    }

    [Fact]
    public void Connect_UnknownVersion_FailsNamingTheVariable()
    {
        var environment = new Dictionary<string, string> { ["PMPI_PMI_VERSION"] = "3", ["PMI_FD"] = "6" };

        var error = Assert.Throws<MpiException>(() => PmiClient.Connect(environment.GetValueOrDefault));

        Assert.Contains("PMPI_PMI_VERSION='3'", error.Message);
    }

    private static string Read(Socket socket, int count)
    {
        var buffer = new byte[count];
        for (int read = 0; read < count;)
        {
            int n = socket.Receive(buffer, read, count - read, SocketFlags.None);
            if (n == 0) throw new IOException("The client closed the connection.");
            read += n;
        }
        return Encoding.UTF8.GetString(buffer);
    }

    private static string Read(Socket socket, char until)
    {
        var text = new StringBuilder();
        while (text.Length == 0 || text[^1] != until) text.Append(Read(socket, 1));
        return text.ToString();
    }
}

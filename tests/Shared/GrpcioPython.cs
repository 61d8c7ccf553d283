namespace Pmpi.Tests.Shared;

/// <summary>
/// Debian's Python with grpcio, the reference gRPC implementation the interop tests talk to, and the contract compiled
/// for it by protoc at test time. A missing piece fails the test saying what to install; it never skips.
/// </summary>
internal static class GrpcioPython
{
    /// <summary>The interpreter Debian's python3-grpcio installs for (not a virtual environment's python3).</summary>
    public const string Python = "/usr/bin/python3";

    private const string Install = "Install them with: apt-get install -y python3-grpcio python3-protobuf protobuf-compiler; CI installs the packages listed in .ci/apt-packages.";

    /// <summary>Variables for a Python child: no user site-packages, no .pyc files beside the scripts, unbuffered output.</summary>
    public static IReadOnlyDictionary<string, string?> Environment { get; } = new Dictionary<string, string?>
    {
        ["PYTHONNOUSERSITE"] = "1",
        ["PYTHONDONTWRITEBYTECODE"] = "1",
        ["PYTHONUNBUFFERED"] = "1",
    };

    /// <summary>
    /// Checks that grpcio imports, then compiles <paramref name="protos"/> (paths under the proto/ folder copied beside
    /// the test assembly) into Python messages in <paramref name="output"/>.
    /// </summary>
    public static async Task CompileContractAsync(string output, string[] protos, TimeSpan timeout)
    {
        if (!File.Exists(Python)) Assert.Fail($"{Python} is missing: the grpcio tests need Debian's Python with grpcio. {Install}");
        var (importCode, importTranscript) = await ChildProcess.RunAsync(Python, ["-c", "import grpc, google.protobuf"], timeout, Environment).ConfigureAwait(false);
        if (importCode != 0) Assert.Fail($"{Python} cannot import grpc and google.protobuf. {Install}\n{importTranscript}");

        var protoRoot = Path.Combine(AppContext.BaseDirectory, "proto");
        int protocCode;
        string protocTranscript;
        try
        {
            (protocCode, protocTranscript) = await ChildProcess.RunAsync("protoc", [$"-I{protoRoot}", $"--python_out={output}", .. protos], timeout).ConfigureAwait(false);
        }
        catch (System.ComponentModel.Win32Exception e)
        {
            Assert.Fail($"protoc was not found ({e.Message}). {Install}");
            return;
        }
        if (protocCode != 0) Assert.Fail($"protoc failed to compile {string.Join(", ", protos)}.\n{protocTranscript}");
    }
}

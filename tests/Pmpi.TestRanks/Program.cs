// Rank program for tests/Pmpi.Integration.Tests: `Pmpi.TestRanks <scenario> [arguments]`. Every rank first prints
// "hello rank=R size=N pid=P job=J agent=A" (A: the TESTRANKS_AGENT variable the launching agent inherited), so a
// test knows where each rank ran and which processes to look for; the scenarios then print lines the tests check.
using System.Globalization;
using Pmpi;
using Environment = Pmpi.Environment;

string scenario = args.Length > 0 ? args[0] : "";
if (scenario == "marker")
{
    // Before PMPI starts: proves a launch happened even when the job could never run.
    File.WriteAllText(args[1], "launched");
}

// Scenarios that act before PMPI starts, on the rank PMPI_RANK names.
bool isTarget = args.Length > 1 && System.Environment.GetEnvironmentVariable("PMPI_RANK") == args[1];
if (scenario == "early" && isTarget)
{
    // Ends with 0 without ever registering: the job must fail at once, naming this rank.
    return;
}
if (scenario == "late" && isTarget)
{
    // Registers only after the given seconds: longer than the job's registration timeout.
    Thread.Sleep(TimeSpan.FromSeconds(Int(args[2])));
}
if (scenario == "linger")
{
    // A rank's grandchild on Windows (scenario "grandchild"), which only the rank's job object ends.
    Thread.Sleep(TimeSpan.FromMinutes(5));
    return;
}
if (scenario == "constructor")
{
    ConstructorForm(ref args);
    return;
}

Environment.Run(ref args, world =>
{
    Hello(world);
    switch (scenario)
    {
        case "collectives":
            Collectives(world);
            break;
        case "args":
            Console.WriteLine($"args: {string.Join(' ', args[1..])}");
            break;
        case "where":
            // Which copy of the program runs, and in which directory: a staged rank runs its agent's copy.
            Console.WriteLine($"where: program={AppContext.BaseDirectory} cwd={System.Environment.CurrentDirectory} sum={world.Allreduce(world.Rank + 1, Operation<int>.Add)}");
            break;
        case "assemblies":
            // After traffic over the rank's links: what the process loaded, and any of ASP.NET Core by name.
            world.Barrier();
            var loaded = AppDomain.CurrentDomain.GetAssemblies().Select(assembly => assembly.GetName().Name ?? "").ToArray();
            var aspNetCore = loaded.Where(name => name.StartsWith("Microsoft.AspNetCore", StringComparison.Ordinal)).ToArray();
            var client = loaded.Where(name => name.StartsWith("Grpc.", StringComparison.Ordinal) || name == "System.Net.Http").Order(StringComparer.Ordinal).ToArray();
            Console.WriteLine($"assemblies: {loaded.Length} loaded, ASP.NET Core: {(aspNetCore.Length == 0 ? "none" : string.Join(' ', aspNetCore))}, "
                + $"gRPC client and HTTP: {(client.Length == 0 ? "none" : string.Join(' ', client))}");
            break;
        case "cores":
            // The processors each of the rank's threads may run on (Linux), distinct lists joined by ' | '.
            Console.WriteLine($"cores: {string.Join(" | ", Directory.EnumerateDirectories("/proc/self/task").Select(AllowedProcessors).Distinct())}");
            break;
        case "exit":
            Fail(world, failing: Int(args[1]), () => System.Environment.Exit(Int(args[2])));
            break;
        case "throw":
            Fail(world, failing: Int(args[1]), () => throw new InvalidOperationException("scenario 'throw' fails on purpose"));
            break;
        case "abort":
            Fail(world, failing: Int(args[1]), () => world.Abort(Int(args[2])));
            break;
        case "block":
            world.Barrier();
            Console.WriteLine("blocking");
            // Nobody sends this: the rank waits until it is killed.
            world.Receive<int>(Communicator.AnySource, 999);
            break;
        case "big":
            Big(world, megabytes: Int(args[1]));
            break;
        case "marker":
        case "early":
        case "late":
            break;
        case "compute":
            Compute(world, seconds: Int(args[1]));
            break;
        case "place":
            // Where the rank sits on its node, as PMPI's API and the agent's variables say.
            Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"place local={Environment.LocalRank}/{Environment.LocalSize} node={Environment.NodeRank} variables={System.Environment.GetEnvironmentVariable("PMPI_LOCAL_RANK")}/{System.Environment.GetEnvironmentVariable("PMPI_LOCAL_SIZE")} node={System.Environment.GetEnvironmentVariable("PMPI_NODE_RANK")}"));
            break;
        case "flood":
            if (world.Rank == 0) Flood(megabytes: Int(args[1]));
            break;
        case "longline":
            if (world.Rank == 0) LongLine(megabytes: Int(args[1]));
            break;
        case "await":
            // Every rank registered and waits (serving its endpoint) until the file exists, then proves the job works.
            world.Barrier();
            Console.WriteLine("waiting");
            while (!File.Exists(args[1])) Thread.Sleep(100);
            Collectives(world);
            break;
        case "domains":
            Domains(world);
            break;
        case "allreduce":
            Allreduce(world, megabytes: Int(args[1]), predefined: args[2] == "predefined");
            break;
        case "wildcard":
            Wildcard(world, perSender: Int(args[1]));
            break;
        case "stream":
            Stream(world);
            break;
        case "grandchild":
            if (world.Rank == 0) Grandchild(pidFile: args[1]);
            world.Receive<int>(Communicator.AnySource, 999);
            break;
        case "spawn":
            Spawn(world, children: Int(args[1]), program: args.Length > 2 ? args[2] : "Pmpi.TestRanks.dll", childArguments: args.Length > 3 ? args[3..] : ["spawned"]);
            break;
        case "spawned":
            Spawned(world);
            // "spawned again": this world then spawns one rank of its own, as its parents spawned it.
            if (args.Length > 1 && args[1] == "again") Spawn(world, children: 1, program: "Pmpi.TestRanks.dll", childArguments: ["spawned"]);
            break;
        default:
            throw new ArgumentException($"Unknown scenario '{scenario}'; see tests/Pmpi.TestRanks/Program.cs.");
    }
});

// MPI.NET's usual opening: the constructor makes this process its rank of the job's world. Nested initialization
// joins that world instead of making another; after Dispose (MPI_Finalize) PMPI cannot start again.
static void ConstructorForm(ref string[] args)
{
    using (var environment = new Environment(ref args))
    {
        var world = Communicator.world;
        Hello(world);
        long sum = world.Allreduce((long)world.Rank, Operation<long>.Add);
        string nested;
        using (new Environment(ref args)) nested = ReferenceEquals(Communicator.world, world) ? "same" : "other";
        string run = "";
        Environment.Run(ref args, inner => run = ReferenceEquals(inner, world) ? "same" : "other");
        Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"constructor rank={world.Rank} size={world.Size} sum={sum} nested={nested} run={run} main={Environment.IsMainThread} initialized={Environment.Initialized}"));
    }
    string again;
    try
    {
        using (new Environment(ref args)) again = "initialized again";
    }
    catch (ObjectDisposedException)
    {
        again = "refused";
    }
    Console.WriteLine($"after finalized={Environment.Finalized} initialized={Environment.Initialized} again={again}");
}

static void Hello(Intracommunicator world) => Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
    $"hello rank={world.Rank} size={world.Size} pid={System.Environment.ProcessId} job={System.Environment.GetEnvironmentVariable("PMPI_JOB_ID")} agent={System.Environment.GetEnvironmentVariable("TESTRANKS_AGENT")}"));

static int Int(string text) => int.Parse(text, CultureInfo.InvariantCulture);

// MPI_Comm_spawn with the last rank as root (so root and intercommunicator leader differ): the root's token reaches
// every child, child c sends c² to parent c mod n, and the merged communicator (parents first) sums its ranks.
// `program` is looked for beside this program; a missing one makes every rank print the spawn's error. The children
// run `childArguments`: the "spawned" scenario below, or another (say "throw 1", a child that fails).
static void Spawn(Intracommunicator world, int children, string program, string[] childArguments)
{
    int root = world.Size - 1;
    Intercommunicator spawned;
    try
    {
        spawned = world.Spawn(program, childArguments, children, root);
    }
    catch (MpiException e) when (e.ErrorClass == ErrorClass.Spawn)
    {
        Console.WriteLine($"spawn failed: {e.Message}");
        return;
    }
    int token = world.Rank == root ? 1000 + world.Size : 0;
    spawned.Broadcast(ref token, world.Rank == root ? Intercommunicator.Root : Intercommunicator.Null);
    var got = Enumerable.Range(0, spawned.RemoteSize).Where(child => child % world.Size == world.Rank).Select(child => spawned.Receive<int>(child, 7)).ToArray();
    var merged = spawned.Merge(upper: false);
    long sum = merged.Allreduce((long)merged.Rank, Operation<long>.Add);
    // Freeing it does not disconnect: Finalize still waits for the children.
    spawned.Dispose();
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"spawn rank={world.Rank} children={spawned.RemoteSize} got=[{string.Join(',', got)}] merged={merged.Rank}/{merged.Size} sum={sum} parent={(world.Parent is null ? "none" : "some")}"));
}

// A rank of the world that Spawn started: its own world, its parents through Parent.
static void Spawned(Intracommunicator world)
{
    var parents = world.Parent ?? throw new InvalidOperationException("a spawned rank has no Parent");
    int token = 0;
    parents.Broadcast(ref token, parents.RemoteSize - 1);
    long sum = world.Allreduce((long)world.Rank, Operation<long>.Add);
    parents.Send(world.Rank * world.Rank, world.Rank % parents.RemoteSize, 7);
    var merged = parents.Merge(upper: true);
    long mergedSum = merged.Allreduce((long)merged.Rank, Operation<long>.Add);
    bool same = ReferenceEquals(parents, Communicator.Self.Parent);
    parents.Dispose();
    Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
        $"spawned rank={world.Rank} size={world.Size} parents={parents.RemoteSize} token={token} sum={sum} merged={merged.Rank}/{merged.Size} sum={mergedSum} same={same} disposed={(world.Parent is null ? "null" : "some")}"));
}

// Every rank contributes rank + 1: the sum is n(n+1)/2 and the gather lists 1..n, each checked by the test.
static void Collectives(Intracommunicator world)
{
    long sum = world.Allreduce((long)world.Rank + 1, Operation<long>.Add);
    int[]? gathered = world.Gather(world.Rank + 1, root: 0);
    if (world.Rank == 0) Console.WriteLine($"allreduce={sum} gather={string.Join(",", gathered!)}");
}

// What a job spanning domains must get right through the gateways: a ring of plain sends (order per pair), Ssend both
// ways between pairs of ranks (completes only when the far receiver matched), a 4 MB message in chunks, and collectives.
static void Domains(Intracommunicator world)
{
    int next = (world.Rank + 1) % world.Size, previous = (world.Rank + world.Size - 1) % world.Size;
    int token = world.Rank == 0 ? 0 : world.Receive<int>(previous, 1);
    world.Send(token + 1, next, 1);
    if (world.Rank == 0) token = world.Receive<int>(previous, 1);
    // Pairs (0,1), (2,3), ...: the even rank Ssends first, the odd one receives first.
    int partner = world.Rank ^ 1;
    for (int i = 0; i < 3 && partner < world.Size; i++)
    {
        if (world.Rank % 2 == 0) { world.Ssend(world.Rank * 10 + i, partner, 2); Check(world.Receive<int>(partner, 2) == partner * 10 + i, "ssend"); }
        else { Check(world.Receive<int>(partner, 2) == partner * 10 + i, "ssend"); world.Ssend(world.Rank * 10 + i, partner, 2); }
    }
    var big = new double[512 * 1024];
    if (world.Rank == 0)
    {
        for (int i = 0; i < big.Length; i++) big[i] = i * 0.5;
        world.Send(big, world.Size - 1, 3);
    }
    else if (world.Rank == world.Size - 1)
    {
        world.Receive(0, 3, ref big);
        for (int i = 0; i < big.Length; i++) Check(big[i] == i * 0.5, "big");
    }
    long sum = world.Allreduce((long)world.Rank + 1, Operation<long>.Add);
    int[]? gathered = world.Gather(world.Rank + 1, root: 0);
    if (world.Rank == 0) Console.WriteLine($"ring={token} ssend=ok big=ok allreduce={sum} gather={string.Join(",", gathered!)}");

    static void Check(bool condition, string what)
    {
        if (!condition) throw new InvalidOperationException($"scenario 'domains': wrong {what} value");
    }
}

// All ranks meet first, so the failure happens mid-run with every rank registered; the others then wait for a message
// that never comes, and only the job's abort can end them.
static void Fail(Intracommunicator world, int failing, Action fail)
{
    world.Barrier();
    Console.WriteLine("running");
    if (world.Rank == failing)
    {
        Thread.Sleep(200);
        Console.WriteLine("failing now");
        fail();
    }
    world.Receive<int>(Communicator.AnySource, 999);
}

// Rank 0 sends a double[] of the given size to rank 1, which checks every element and reports.
static void Big(Intracommunicator world, int megabytes)
{
    int length = (int)(megabytes * 1024L * 1024 / sizeof(double));
    if (world.Rank == 0)
    {
        var values = new double[length];
        for (int i = 0; i < length; i++) values[i] = Value(i);
        world.Send(values, dest: 1, tag: 1);
        Console.WriteLine($"sent {length} doubles");
    }
    else if (world.Rank == 1)
    {
        var values = world.Receive<double[]>(source: 0, tag: 1);
        int mismatch = -1;
        for (int i = 0; i < values.Length && mismatch < 0; i++)
            if (values[i] != Value(i)) mismatch = i;
        Console.WriteLine(mismatch < 0 && values.Length == length
            ? $"big ok {values.Length} doubles"
            : $"big mismatch: length {values.Length} of {length}, first difference at {mismatch}");
    }

    // Not a simple ramp, so a chunk delivered out of place or twice would not compare equal.
    static double Value(int i) => i * 0.5 + (i % 7919);
}

// An Allreduce of an array of doubles, by Operation<double>.Add or by a user's operation that adds (b + a, which
// PMPI does not take for MPI_SUM, so not known to commute); rank 0 prints whether it is right.
static void Allreduce(Intracommunicator world, int megabytes, bool predefined)
{
    int length = megabytes * 1024 * 1024 / sizeof(double);
    var values = Enumerable.Range(0, length).Select(i => (double)(world.Rank + i % 1000)).ToArray();
    var sum = predefined ? world.Allreduce(values, Operation<double>.Add) : world.Allreduce(values, (a, b) => b + a);
    long ranks = world.Size * (world.Size - 1L) / 2;
    bool right = Enumerable.Range(0, length).All(i => sum[i] == ranks + world.Size * (double)(i % 1000));
    if (world.Rank == 0) Console.WriteLine($"allreduce {(right ? "ok" : "wrong")} {length} doubles");
}

// Every other rank sends rank 0 `perSender` numbered messages (every tenth synchronous, every seventh 64 KB), which
// rank 0 receives with wildcard source and tag: it checks that each sender's arrive in order and prints the counts.
static void Wildcard(Intracommunicator world, int perSender)
{
    if (world.Rank != 0)
    {
        for (int i = 0; i < perSender; i++)
        {
            int[] message = i % 7 == 0 ? new int[16 * 1024] : new int[1];
            message[0] = i;
            if (i % 10 == 0) world.Ssend(message, 0, world.Rank);
            else world.Send(message, 0, world.Rank);
        }
        return;
    }
    var next = new int[world.Size];
    for (int received = 0; received < (world.Size - 1) * perSender; received++)
    {
        world.Receive(Communicator.anySource, Communicator.anyTag, out int[] message, out var status);
        if (status.Source != status.Tag || message[0] != next[status.Source]++)
            throw new InvalidOperationException($"scenario 'wildcard': message {message[0]} from rank {status.Source} (tag {status.Tag}) is out of order");
    }
    Console.WriteLine($"wildcard ok {string.Join(",", next[1..])}");
}

// Rank 0 sends 16 MB messages to rank 1 until the job ends (rank 1 says once that it is receiving): a transfer
// that is always in flight, for tests that kill a rank mid-message.
static void Stream(Intracommunicator world)
{
    var block = new double[2 * 1024 * 1024];
    if (world.Rank == 0)
        while (true) world.Send(block, 1, 5);
    if (world.Rank != 1) return;
    world.Receive(0, 5, ref block);
    Console.WriteLine("streaming");
    while (true) world.Receive(0, 5, ref block);
}

// A compute phase with no PMPI call at all, longer than the heartbeat timeout: the runtime's heartbeat must carry it.
static void Compute(Intracommunicator world, int seconds)
{
    var until = DateTime.UtcNow.AddSeconds(seconds);
    double x = 0;
    while (DateTime.UtcNow < until) x += Math.Sqrt(x + 1);
    world.Barrier();
    if (world.Rank == 0) Console.WriteLine($"computed {x > 0}");
}

// Lines of exactly 1,024 bytes (a counter, padding, newline), as fast as the pipe takes them.
static void Flood(int megabytes)
{
    using var stdout = Console.OpenStandardOutput();
    var line = new byte[1024];
    line.AsSpan().Fill((byte)'.');
    line[^1] = (byte)'\n';
    int lines = megabytes * 1024;
    for (int i = 0; i < lines; i++)
    {
        System.Text.Encoding.ASCII.GetBytes($"{i:D10}", line);
        stdout.Write(line);
    }
    stdout.Flush();
    Console.Error.WriteLine($"flood done lines={lines}");
}

// One line of the given size with no newline at all, written in 1 MB blocks.
static void LongLine(int megabytes)
{
    using var stdout = Console.OpenStandardOutput();
    var block = new byte[1024 * 1024];
    block.AsSpan().Fill((byte)'x');
    for (int i = 0; i < megabytes; i++) stdout.Write(block);
    stdout.Flush();
    Console.Error.WriteLine($"longline done bytes={megabytes * 1024L * 1024}");
}

// Starts a process that leaves this rank's session (setsid) and its parent (which exits at once, so the process is
// re-parented and no longer in the rank's process tree), and writes its process id to a file. It keeps the rank's
// output pipes open, as a daemon started carelessly would.
static void Grandchild(string pidFile)
{
    if (OperatingSystem.IsWindows())
    {
        // This program again, lingering: it inherits the rank's job object, as any process the rank starts.
        using var lingering = System.Diagnostics.Process.Start(System.Environment.ProcessPath!, ["linger"]);
        Console.WriteLine($"grandchild pid={lingering.Id}");
        return;
    }
    using var child = System.Diagnostics.Process.Start("/bin/sh", ["-c", $"setsid sh -c 'echo $$ > \"{pidFile}\"; exec sleep 300' &"]);
    var deadline = DateTime.UtcNow.AddSeconds(30);
    while (!File.Exists(pidFile) || File.ReadAllText(pidFile).Trim().Length == 0)
    {
        if (DateTime.UtcNow > deadline) throw new TimeoutException("the grandchild did not write its process id");
        Thread.Sleep(50);
    }
    Console.WriteLine($"grandchild pid={File.ReadAllText(pidFile).Trim()}");
}

// A thread's Cpus_allowed_list from its /proc/self/task/TID/status, as "0-1" or "1".
static string AllowedProcessors(string task) =>
    File.ReadLines(Path.Combine(task, "status")).First(line => line.StartsWith("Cpus_allowed_list:", StringComparison.Ordinal))["Cpus_allowed_list:".Length..].Trim();

// The collectives of MixedLanguageTests as a C programmer writes them: MPI_* names, MPI_SUM and MPI_MAX, and a lambda
// where MPI would want MPI_Op_create. The F# and Visual Basic programs beside it make the same calls in their idioms;
// every rank checks what it got against the serial result and prints one line, or fails the job.
using Pmpi;
using static Pmpi.Classic.MPI;

MPI_Init(ref args);
MPI_Comm_rank(MPI_COMM_WORLD, out int rank);
MPI_Comm_size(MPI_COMM_WORLD, out int size);
var world = MPI_COMM_WORLD;
int checks = 0;

if (args is ["mismatch"])
{
    // Ranks in other languages pass a subtraction here: the job must fail at once, naming both operations.
    var values = new double[262_144];
    MPI_Allreduce(values, new double[values.Length], values.Length, MPI_DOUBLE, MPI_SUM, world);
    throw new InvalidOperationException("The mismatched allreduce returned.");
}

foreach (int n in new[] { 1, 1000, 131_072, 524_288 })
{
    var mine = new double[n];
    for (int i = 0; i < n; i++) mine[i] = i % 97 * (rank + 1);
    var sums = new double[n];
    MPI_Allreduce(mine, sums, n, MPI_DOUBLE, MPI_SUM, world);
    Check(sums, i => i % 97 * (size * (size + 1) / 2), "sum", n);

    var maxima = new double[n];
    MPI_Allreduce(mine, maxima, n, MPI_DOUBLE, MPI_MAX, world);
    Check(maxima, i => i % 97 * size, "max", n);

    var own = new double[n];
    for (int i = 0; i < n; i++) own[i] = (i + rank) % 3;
    Check(world.Allreduce(own, (a, b) => a + b + a * b), i => Own(i, size), "user operation", n);

    int root = n % size;
    var reduced = rank == root ? new double[n] : null;
    MPI_Reduce(mine, reduced, n, MPI_DOUBLE, MPI_SUM, root, world);
    if (rank == root) Check(reduced!, i => i % 97 * (size * (size + 1) / 2), "reduce", n);

    var shared = new double[n];
    if (rank == 0) for (int i = 0; i < n; i++) shared[i] = i * 0.5;
    MPI_Bcast(shared, n, MPI_DOUBLE, 0, world);
    Check(shared, i => i * 0.5, "broadcast", n);
}

int one = rank + 1, total = 0;
MPI_Allreduce(ref one, ref total, 1, MPI_INT, MPI_SUM, world);
Check([total], _ => size * (size + 1) / 2, "scalar sum", 1);
double highest = 0, value = rank * 1.5;
MPI_Allreduce(ref value, ref highest, 1, MPI_DOUBLE, MPI_MAX, world);
Check([highest], _ => (size - 1) * 1.5, "scalar max", 1);
long product = world.Allreduce((long)(rank % 2), (a, b) => a + b + a * b);
Check([product], _ => (1L << (size / 2)) - 1, "scalar user operation", 1);

// Nonblocking, persistent and neighbourhood calls, each rank in its own language's form.
var big = new double[524_288];
for (int i = 0; i < big.Length; i++) big[i] = i % 97 * (rank + 1);
var bigSums = new double[big.Length];
MPI_Iallreduce(big, bigSums, big.Length, MPI_DOUBLE, MPI_SUM, world, out var pending);
double computed = 0;
for (int i = 0; i <= 100_000; i++) computed += Math.Sqrt(i);
MPI_Wait(pending, MPI_STATUS_IGNORE);
Check(bigSums, i => i % 97 * (size * (size + 1) / 2), "nonblocking sum", big.Length);

var halves = new double[1000];
if (rank == 0) for (int i = 0; i < halves.Length; i++) halves[i] = i * 0.5;
MPI_Ibcast(halves, halves.Length, MPI_DOUBLE, 0, world, out var broadcast);
MPI_Wait(broadcast, MPI_STATUS_IGNORE);
Check(halves, i => i * 0.5, "nonblocking broadcast", 1000);

double[] round = [0], roundMax = [0];
MPI_Allreduce_init(round, roundMax, 1, MPI_DOUBLE, MPI_MAX, world, MPI_INFO_NULL, out var step);
for (int r = 1; r <= 3; r++)
{
    round[0] = rank * r;
    MPI_Start(step);
    MPI_Wait(step, MPI_STATUS_IGNORE);
    Check(roundMax, _ => (size - 1) * r, "persistent max", 1);
}
MPI_Request_free(ref step);

MPI_Cart_create(world, 1, [size], [true], false, out var ring);
int[] halo = new int[2];
MPI_Neighbor_alltoall(new[] { rank * 10, rank * 10 + 1 }, 1, MPI_INT, halo, 1, MPI_INT, ring!);
Check(halo, slot => slot == 0 ? (rank + size - 1) % size * 10 + 1 : (rank + 1) % size * 10, "neighbours", 2);

Console.WriteLine($"C# rank {rank}: {checks} checks passed");
MPI_Finalize();

void Check<T>(T[] got, Func<int, T> expected, string what, int n)
{
    for (int i = 0; i < got.Length; i++)
    {
        if (!EqualityComparer<T>.Default.Equals(got[i], expected(i)))
            throw new InvalidOperationException($"C# rank {rank}: {what} of {n} elements: element {i} is {got[i]}, expected {expected(i)}.");
    }
    checks++;
}

// Every rank's (i + rank) % 3 combined by a + b + ab: the product of (1 + each) less one.
static double Own(int i, int size)
{
    double product = 1;
    for (int r = 0; r < size; r++) product *= 1 + (i + r) % 3;
    return product - 1;
}

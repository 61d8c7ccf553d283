/* The PMPI paper's master/worker matrix multiply in C over native MPI, the same algorithm and protocol as
 * examples/MatMul.{CSharp,VisualBasic,FSharp}: each worker sends its language (tag 0); the master sends each worker
 * {rows, columns, columnsOfB} (tag 1), all of B (tag 2) and its consecutive rows of A (tag 3); the worker multiplies
 * in i-k-j order and returns its rows of C (tag 4). The master times that, then checks C against a sequential
 * product and prints the line the .NET versions print.
 *
 *   mpicc -O3 -march=native -o matmul matmul.c && mpirun -np 3 ./matmul [rows cols columnsOfB]
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LANGUAGE_TAG, SIZE_TAG, B_TAG, A_TAG, C_TAG };

static double element_of_a(int i, int j) { return (i * 31 + j * 17) % 101 / 101.0 - 0.5; }
static double element_of_b(int i, int j) { return (i * 13 + j * 7) % 37 / 37.0 - 0.25; }

static void multiply(const double *a, const double *b, double *c, int rows, int columns, int columns_of_b)
{
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < columns; k++) {
            double aik = a[(size_t)i * columns + k];
            const double *row_of_b = b + (size_t)k * columns_of_b;
            double *row_of_c = c + (size_t)i * columns_of_b;
            for (int j = 0; j < columns_of_b; j++) row_of_c[j] += aik * row_of_b[j];
        }
}

static int share(int rows, int workers, int worker) { return rows / workers + (worker - 1 < rows % workers ? 1 : 0); }
static int first_row(int rows, int workers, int worker)
{
    return (worker - 1) * (rows / workers) + (worker - 1 < rows % workers ? worker - 1 : rows % workers);
}

static double *allocate(size_t count)
{
    double *p = calloc(count, sizeof(double));
    if (!p) { fprintf(stderr, "out of memory for %zu doubles\n", count); MPI_Abort(MPI_COMM_WORLD, 2); }
    return p;
}

static void worker(void)
{
    int sizes[3];
    MPI_Send("C", 2, MPI_CHAR, 0, LANGUAGE_TAG, MPI_COMM_WORLD);
    MPI_Recv(sizes, 3, MPI_INT, 0, SIZE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double *b = allocate((size_t)sizes[1] * sizes[2]);
    double *a = allocate((size_t)sizes[0] * sizes[1]);
    double *c = allocate((size_t)sizes[0] * sizes[2]);
    MPI_Recv(b, sizes[1] * sizes[2], MPI_DOUBLE, 0, B_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(a, sizes[0] * sizes[1], MPI_DOUBLE, 0, A_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    multiply(a, b, c, sizes[0], sizes[1], sizes[2]);
    MPI_Send(c, sizes[0] * sizes[2], MPI_DOUBLE, 0, C_TAG, MPI_COMM_WORLD);
    free(a); free(b); free(c);
}

static void master(int size, int rows, int columns, int columns_of_b)
{
    int workers = size - 1;
    double *a = allocate((size_t)rows * columns), *b = allocate((size_t)columns * columns_of_b);
    double *c = allocate((size_t)rows * columns_of_b), *expected = allocate((size_t)rows * columns_of_b);
    for (int i = 0; i < rows; i++) for (int j = 0; j < columns; j++) a[(size_t)i * columns + j] = element_of_a(i, j);
    for (int i = 0; i < columns; i++) for (int j = 0; j < columns_of_b; j++) b[(size_t)i * columns_of_b + j] = element_of_b(i, j);
    for (int w = 1; w <= workers; w++) {
        char language[64];
        MPI_Recv(language, sizeof language, MPI_CHAR, w, LANGUAGE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("worker %d: %s\n", w, language);
    }

    double start = MPI_Wtime();
    if (workers == 0) multiply(a, b, c, rows, columns, columns_of_b);
    for (int w = 1; w <= workers; w++) {
        int count = share(rows, workers, w), sizes[3] = { count, columns, columns_of_b };
        MPI_Send(sizes, 3, MPI_INT, w, SIZE_TAG, MPI_COMM_WORLD);
        MPI_Send(b, columns * columns_of_b, MPI_DOUBLE, w, B_TAG, MPI_COMM_WORLD);
        MPI_Send(a + (size_t)first_row(rows, workers, w) * columns, count * columns, MPI_DOUBLE, w, A_TAG, MPI_COMM_WORLD);
    }
    for (int w = 1; w <= workers; w++)
        MPI_Recv(c + (size_t)first_row(rows, workers, w) * columns_of_b, share(rows, workers, w) * columns_of_b, MPI_DOUBLE, w, C_TAG,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    double seconds = MPI_Wtime() - start;

    start = MPI_Wtime();
    for (int i = 0; i < rows; i++)
        for (int k = 0; k < columns; k++)
            for (int j = 0; j < columns_of_b; j++)
                expected[(size_t)i * columns_of_b + j] += a[(size_t)i * columns + k] * b[(size_t)k * columns_of_b + j];
    double sequential = MPI_Wtime() - start, max_error = 0, sum = 0;
    for (size_t i = 0; i < (size_t)rows * columns_of_b; i++) {
        max_error = fmax(max_error, fabs(c[i] - expected[i]));
        sum += c[i];
    }
    printf("C = A(%dx%d) x B(%dx%d) by a master in C and %d workers in %.3f s (sequential %.3f s), max abs error %.2E, sum of C %.17g\n",
           rows, columns, columns, columns_of_b, workers, seconds, sequential, max_error, sum);
    free(a); free(b); free(c); free(expected);
    if (max_error > 1e-9) MPI_Abort(MPI_COMM_WORLD, 3);
}

int main(int argc, char **argv)
{
    int rank, size, sizes[3] = { 2400, 1200, 500 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc && i <= 3; i++) sizes[i - 1] = atoi(argv[i]);
    if (sizes[0] <= 0 || sizes[1] <= 0 || sizes[2] <= 0) {
        if (rank == 0) fprintf(stderr, "usage: matmul [rows cols columnsOfB], all positive\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == 0) master(size, sizes[0], sizes[1], sizes[2]);
    else worker();
    MPI_Finalize();
    return 0;
}

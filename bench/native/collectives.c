/* Collective latency with native MPI: Allreduce (sum of doubles) and Bcast (bytes from rank 0) per message size,
 * one line each from rank 0, "operation<TAB>size<TAB>us" (the slowest rank's mean time per call).
 * bench/Pmpi.Bench's `collectives` command mirrors it. Usage: mpirun -np 4 ./collectives [--quick] [--sizes N...]
 * (--quick: a tenth of the calls; --sizes: these sizes instead of the sweep's, bench/native/options.h) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "options.h"

static const int sweep[] = {8, 64, 1024, 8192, 65536, 1 << 20};

/* Timed calls per size: 20000 up to 8 KB (as pingpong.c: 2000 calls of a microsecond were a few milliseconds, shorter
 * than one scheduler time slice on a shared VM), 500 up to 64 KB, 50 above; --quick divides by 10. */
static int iterations_for(int n, int quick) {
  int iters = n <= 8192 ? 20000 : (n <= 65536 ? 500 : 50);
  return quick ? iters / 10 : iters;
}

/* Mean seconds per call of one operation on n bytes, the maximum over ranks. */
static double time_op(int allreduce, int n, int iters, double *in, double *out) {
  int warm = iters / 10, count = n / (int)sizeof(double);
  double t0 = 0;
  for (int i = 0; i < iters + warm; i++) {
    if (i == warm) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
    if (allreduce) MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else MPI_Bcast(in, n, MPI_BYTE, 0, MPI_COMM_WORLD);
  }
  double mine = (MPI_Wtime() - t0) / iters, slowest;
  MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct options o = parse_options(argc, argv, sweep, sizeof sweep / sizeof sweep[0], 1 << 20, 0,
                                   "collectives [--quick] [--sizes N...]");
  double *in = malloc(1 << 20), *out = malloc(1 << 20);
  for (int i = 0; i < (1 << 20) / (int)sizeof(double); i++) in[i] = rank + i;
  for (int op = 0; op < 2; op++) {
    for (int s = 0; s < o.count; s++) {
      int n = o.sizes[s];
      double t = time_op(op == 0, n, iterations_for(n, o.quick), in, out);
      if (rank == 0) { printf("%s\t%d\t%.2f\n", op == 0 ? "allreduce" : "bcast", n, t * 1e6); fflush(stdout); }
    }
  }
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}

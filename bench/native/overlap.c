/* How much of a nonblocking allreduce hides behind computation, as the OSU benchmark osu_iallreduce measures it: per
 * size, the blocking Allreduce's time; Iallreduce + Wait alone (pure); a computation as long as that alone; and
 * Iallreduce, the computation, then Wait (total). Overlap = 100 * (1 - (total - compute) / pure), within 0..100: 100
 * when the collective completes entirely while the rank computes, 0 when it waits until Wait. The computation makes no
 * MPI call, so only progress made apart from the program's calls counts. One line per size from rank 0,
 * "iallreduce<TAB>size<TAB>allreduce_us<TAB>pure_us<TAB>compute_us<TAB>total_us<TAB>overlap_pct" (each time the
 * slowest rank's mean). bench/Pmpi.Bench's `overlap` command mirrors it.
 * Usage: mpirun -np 4 ./overlap [--quick] [--sizes N...] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include "options.h"

static const int sweep[] = {8, 65536, 1 << 20};

/* Timed calls per size, as collectives.c: 20000 up to 8 KB, 500 up to 64 KB, 50 above; --quick divides by 10. */
static int iterations_for(int n, int quick) {
  int iters = n <= 8192 ? 20000 : (n <= 65536 ? 500 : 50);
  return quick ? iters / 10 : iters;
}

static volatile double sink;

/* Arithmetic for the given seconds, no MPI call but the clock. */
static void compute(double seconds) {
  double start = MPI_Wtime(), x = 1;
  while (MPI_Wtime() - start < seconds)
    for (int i = 0; i < 100; i++) x = x * 1.000001 + 1e-9;
  sink = x;
}

enum mode { BLOCKING, PURE, COMPUTE, TOTAL };

/* Mean seconds per iteration of one mode, the maximum over ranks. */
static double time_mode(enum mode m, int count, int iters, double work, double *in, double *out) {
  int warm = iters / 10;
  double t0 = 0;
  for (int i = 0; i < iters + warm; i++) {
    if (i == warm) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
    MPI_Request request;
    switch (m) {
      case BLOCKING: MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
      case PURE:
        MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        break;
      case COMPUTE: compute(work); break;
      case TOTAL:
        MPI_Iallreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &request);
        compute(work);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        break;
    }
  }
  double mine = (MPI_Wtime() - t0) / iters, slowest;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct options o = parse_options(argc, argv, sweep, sizeof sweep / sizeof sweep[0], 1 << 20, 0,
                                   "overlap [--quick] [--sizes N...]");
  double *in = malloc(1 << 20), *out = malloc(1 << 20);
  for (int i = 0; i < (1 << 20) / (int)sizeof(double); i++) in[i] = rank + i;
  for (int s = 0; s < o.count; s++) {
    int n = o.sizes[s], count = n / (int)sizeof(double), iters = iterations_for(n, o.quick);
    if (count < 1) count = 1;
    double blocking = time_mode(BLOCKING, count, iters, 0, in, out);
    double pure = time_mode(PURE, count, iters, 0, in, out);
    double work = time_mode(COMPUTE, count, iters, pure, in, out);
    double total = time_mode(TOTAL, count, iters, pure, in, out);
    double overlap = 100 * (1 - (total - work) / pure);
    overlap = overlap < 0 ? 0 : (overlap > 100 ? 100 : overlap);
    if (rank == 0) {
      printf("iallreduce\t%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.1f\n", n, blocking * 1e6, pure * 1e6, work * 1e6, total * 1e6, overlap);
      fflush(stdout);
    }
  }
  free(in);
  free(out);
  MPI_Finalize();
  return 0;
}

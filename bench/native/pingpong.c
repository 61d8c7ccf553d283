/* Ping-pong between ranks 0 and 1 with native MPI: one line per message size, "size<TAB>half_rtt_us<TAB>MB/s".
 * bench/Pmpi.Bench's `pingpong` command mirrors it statement for statement (sizes, iterations, warm-up, barrier).
 * Usage: mpirun -np 2 ./pingpong [--quick]   (--quick: a tenth of the iterations) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int sizes[] = {1, 8, 64, 1024, 8192, 65536, 1 << 20, 4 << 20, 16 << 20};

/* Timed round trips per size: 20000 up to 8 KB, 5000 up to 64 KB, 200 above; --quick divides by 10. */
static int iterations_for(int n, int quick) {
  int iters = n <= 8192 ? 20000 : (n <= 65536 ? 5000 : 200);
  return quick ? iters / 10 : iters;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char *buf = malloc(16 << 20);
  memset(buf, 1, 16 << 20);
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    int n = sizes[s], iters = iterations_for(n, quick), warm = iters / 10;
    double t0 = 0;
    for (int i = 0; i < iters + warm; i++) {
      if (i == warm) { MPI_Barrier(MPI_COMM_WORLD); t0 = MPI_Wtime(); }
      if (rank == 0) {
        MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    double half = (MPI_Wtime() - t0) / iters / 2;
    if (rank == 0) { printf("%d\t%.2f\t%.1f\n", n, half * 1e6, n / half / 1e6); fflush(stdout); }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}

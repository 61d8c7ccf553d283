/* A program's first round trips: a ping-pong of 1 byte between ranks 0 and 1 from the first message after MPI_Init,
 * without warm-up, timed in windows that end at round trip 1, 10, 100, 1,000, 10,000 and 100,000. Rank 0 prints a
 * line a window, "last_round_trip<TAB>half_rtt_us" (the window's mean). bench/Pmpi.Bench.FirstMessages is the same
 * program written against PMPI's public API, as a user writes a first ping-pong.
 * Usage: mpirun -np 2 ./firstmessages [--quick]   (--quick: up to 10,000 round trips) */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define MAX_WINDOWS 6

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int quick = argc == 2 && strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && !quick) {
    if (rank == 0) fprintf(stderr, "unknown argument '%s' (usage: firstmessages [--quick]).\n", argv[1]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int last = quick ? 10000 : 100000, ends[MAX_WINDOWS], windows = 0, done = 0;
  double means[MAX_WINDOWS];
  char message = 1;
  for (int end = 1; end <= last; end *= 10) {
    double t0 = MPI_Wtime();
    int first = done;
    for (; done < end; done++) {
      if (rank == 0) {
        MPI_Send(&message, 1, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
        MPI_Recv(&message, 1, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(&message, 1, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&message, 1, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
      }
    }
    means[windows] = (MPI_Wtime() - t0) * 1e6 / (end - first) / 2;
    ends[windows++] = end;
  }
  if (rank == 0) {
    printf("# Open MPI, 2 ranks, from the first message: last_round_trip\thalf_rtt_us\n");
    for (int w = 0; w < windows; w++) printf("%d\t%.3f\n", ends[w], means[w]);
  }
  MPI_Finalize();
  return 0;
}

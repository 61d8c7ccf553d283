/* Ping-pong between ranks 0 and 1 with native MPI: one line per message size, "size<TAB>half_rtt_us<TAB>MB/s".
 * bench/Pmpi.Bench's `pingpong` command mirrors it statement for statement (sizes, iterations, warm-up, barrier).
 * Usage: mpirun -np 2 ./pingpong [--quick] [--counters] [--sizes N...]   (--quick: a tenth of the iterations;
 * --sizes: these message sizes instead of the sweep's, as bench/run.sh pairs runs size by size; --counters: ranks 0
 * and 1 also print "# counters<TAB>rank<TAB>size<TAB>voluntary<TAB>involuntary<TAB>-<TAB>-<TAB>round_trips<TAB>pid
 * <TAB>start<TAB>end": their process's context switches per round trip over the timed loop, every thread's, as
 * Pmpi.Bench's, which adds allocations where the dashes are; then the loop's round trips, and its window in
 * CLOCK_MONOTONIC nanoseconds, in which bench/counters.sh counts the process's system calls) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>
#include "options.h"

/* This process's context switches, voluntary and involuntary, summed over its threads (/proc/self/task/ * /status). */
static void context_switches(long long out[2]) {
  out[0] = out[1] = 0;
  DIR *tasks = opendir("/proc/self/task");
  for (struct dirent *task; tasks && (task = readdir(tasks));) {
    if (task->d_name[0] == '.') continue;
    char path[288], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%s/status", task->d_name);
    FILE *status = fopen(path, "r");
    while (status && fgets(line, sizeof line, status)) {
      long long value;
      if (sscanf(line, "voluntary_ctxt_switches: %lld", &value) == 1) out[0] += value;
      else if (sscanf(line, "nonvoluntary_ctxt_switches: %lld", &value) == 1) out[1] += value;
    }
    if (status) fclose(status);
  }
  if (tasks) closedir(tasks);
}

static long long monotonic_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static const int sweep[] = {1, 8, 64, 1024, 8192, 65536, 1 << 20, 4 << 20, 16 << 20};
#define MAX_SIZE (16 << 20)

/* Timed round trips per size: 20000 up to 8 KB, 5000 up to 64 KB, 200 above; --quick divides by 10. */
static int iterations_for(int n, int quick) {
  int iters = n <= 8192 ? 20000 : (n <= 65536 ? 5000 : 200);
  return quick ? iters / 10 : iters;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  struct options o = parse_options(argc, argv, sweep, sizeof sweep / sizeof sweep[0], MAX_SIZE, 1,
                                   "pingpong [--quick] [--counters] [--sizes N...]");
  char *buf = malloc(MAX_SIZE);
  memset(buf, 1, MAX_SIZE);
  for (int s = 0; s < o.count; s++) {
    int n = o.sizes[s], iters = iterations_for(n, o.quick), warm = iters / 10;
    double t0 = 0;
    long long before[2], after[2], start = 0, end;
    for (int i = 0; i < iters + warm; i++) {
      if (i == warm) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (o.counters) { context_switches(before); start = monotonic_ns(); }
        t0 = MPI_Wtime();
      }
      if (rank == 0) {
        MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
    }
    double half = (MPI_Wtime() - t0) / iters / 2;
    end = monotonic_ns();
    if (o.counters) context_switches(after);
    if (rank == 0) { printf("%d\t%.2f\t%.1f\n", n, half * 1e6, n / half / 1e6); fflush(stdout); }
    if (o.counters && rank < 2) {
      printf("# counters\t%d\t%d\t%.2f\t%.2f\t-\t-\t%d\t%d\t%lld\t%lld\n", rank, n, (double)(after[0] - before[0]) / iters,
             (double)(after[1] - before[1]) / iters, iters, (int)getpid(), start, end);
      fflush(stdout);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}

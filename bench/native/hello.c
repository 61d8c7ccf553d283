/* The smallest MPI program, for launch time and footprint: each rank initialises, waits in a barrier, reports its
 * resident memory at that point ("rank<TAB>size<TAB>rss_kb"), and finalises. bench/Pmpi.Bench's `hello` mirrors it.
 * Usage: mpirun -np N ./hello */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* VmRSS of this process in KiB, from /proc/self/status; -1 where there is none. */
static long resident_kib(void) {
  FILE *status = fopen("/proc/self/status", "r");
  if (!status) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, status))
    if (strncmp(line, "VmRSS:", 6) == 0) { sscanf(line + 6, "%ld", &kib); break; }
  fclose(status);
  return kib;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Barrier(MPI_COMM_WORLD);
  printf("%d\t%d\t%ld\n", rank, size, resident_kib());
  fflush(stdout);
  MPI_Finalize();
  return 0;
}

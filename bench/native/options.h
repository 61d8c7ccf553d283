/* The command line of the native benchmarks (pingpong.c, collectives.c): --quick, --sizes N... (these message sizes
 * instead of the program's sweep, as bench/run.sh pairs its runs size by size) and, where the program takes it,
 * --counters. An unknown argument or a size out of range ends the job with a message that names it. */
#ifndef PMPI_BENCH_OPTIONS_H
#define PMPI_BENCH_OPTIONS_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 16

struct options {
  int quick, counters, count, sizes[MAX_SIZES];
};

static void refuse(int rank, const char *usage, const char *why, const char *argument) {
  if (rank == 0) fprintf(stderr, "%s '%s' (usage: %s).\n", why, argument, usage);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

static struct options parse_options(int argc, char **argv, const int *sweep, int sweep_count, int max_size,
                                    int takes_counters, const char *usage) {
  struct options o = {0};
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int a = 1; a < argc; a++) {
    if (strcmp(argv[a], "--quick") == 0) o.quick = 1;
    else if (takes_counters && strcmp(argv[a], "--counters") == 0) o.counters = 1;
    else if (strcmp(argv[a], "--sizes") == 0) {
      for (; a + 1 < argc && strncmp(argv[a + 1], "--", 2) != 0; a++) {
        char *end;
        long n = strtol(argv[a + 1], &end, 10);
        if (*end || n < 1 || n > max_size || o.count == MAX_SIZES) refuse(rank, usage, "a size out of range (1 byte to the sweep's largest, at most 16 of them):", argv[a + 1]);
        o.sizes[o.count++] = (int)n;
      }
    } else refuse(rank, usage, "unknown argument", argv[a]);
  }
  if (o.count == 0) for (o.count = 0; o.count < sweep_count; o.count++) o.sizes[o.count] = sweep[o.count];
  return o;
}
#endif

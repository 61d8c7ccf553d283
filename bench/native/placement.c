/* Where the host has put this machine's cores, sampled while the benchmarks run. On a VM the host may move the guest's
 * vCPUs onto cores that share no last-level cache, for tenths of a second to tens of seconds: then a cache line takes
 * several times as long to pass between two of them, and every same-node transfer of data that sits in the other
 * core's cache slows with it, Open MPI's and PMPI's alike (docs/bench-log/2026-11-28-host-placement-of-cores.md,
 * "The host's placement of the cores").
 * Every 10 ms, thread 0 (on CPU 0) and one partner thread (on CPU k, each other CPU in turn) wake together and hand a
 * counter back and forth through one cache line, 80 times, for at most 2 ms; the round trip of the fastest batch of 8
 * is the sample: the two threads' distance, whatever else delays either of them between batches.
 * Prints "seconds<TAB>cpu<TAB>ns" per sample (CLOCK_REALTIME, as `date +%s.%N`; ns "-" when the partner did not run
 * within the 2 ms). Runs until killed; needs 2 CPUs or more.
 * Usage: cc -O2 -pthread -o placement bench/native/placement.c && ./placement > samples */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define PERIOD_NS 10000000L
#define WINDOW_NS 2000000L
#define WARM_ROUND_TRIPS 16
#define BATCHES 8
#define BATCH 8 /* round trips */

/* The counter: the sample's number in the high bits, the hand-offs so far in the low 8. */
static _Alignas(64) _Atomic long line;
static _Alignas(64) long first_tick;
static int cpus;

static long now(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void sleep_until(long ns) {
  struct timespec t = {ns / 1000000000L, ns % 1000000000L};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) != 0) {}
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0) {
    fprintf(stderr, "placement: cannot run a thread on CPU %d\n", cpu);
    exit(1);
  }
}

/* The partner on CPU k answers sample s's odd hand-offs on the ticks that are its own, until its window closes. */
static void *partner(void *arg) {
  int k = (int)(long)arg;
  pin(k);
  for (long s = k - 1;; s += cpus - 1) {
    long tick = first_tick + s * PERIOD_NS;
    sleep_until(tick);
    for (long i = 1, spins = 1; i < 2 * (WARM_ROUND_TRIPS + BATCHES * BATCH); spins++) {
      if (atomic_load_explicit(&line, memory_order_acquire) == (s << 8 | i)) {
        atomic_store_explicit(&line, s << 8 | (i + 1), memory_order_release);
        i += 2;
      } else if (spins % 256 == 0 && now(CLOCK_MONOTONIC) >= tick + WINDOW_NS) {
        break;
      }
    }
  }
  return NULL;
}

/* Thread 0's side of round trips [first, first + count) of sample s; false if the window closed first. */
static int hand_off(long s, long first, long count, long tick) {
  for (long i = first; i < first + 2 * count; i += 2) {
    atomic_store_explicit(&line, s << 8 | i, memory_order_release);
    for (long spins = 1; atomic_load_explicit(&line, memory_order_acquire) != (s << 8 | (i + 1)); spins++)
      if (spins % 256 == 0 && now(CLOCK_MONOTONIC) >= tick + WINDOW_NS) return 0;
  }
  return 1;
}

int main(void) {
  cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (cpus < 2) {
    fprintf(stderr, "placement: one CPU, no placement to sample\n");
    return 1;
  }
  pin(0);
  first_tick = now(CLOCK_MONOTONIC) + PERIOD_NS;
  for (long k = 1; k < cpus; k++) {
    pthread_t thread;
    pthread_create(&thread, NULL, partner, (void *)k);
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  for (long s = 0;; s++) {
    long tick = first_tick + s * PERIOD_NS, took = -1;
    sleep_until(tick);
    /* The first round trips wait for the partner to wake; the others are timed in batches, and the fastest batch
     * counts, so that a batch in which either thread lost its CPU does not. */
    if (hand_off(s, 1, WARM_ROUND_TRIPS, tick))
      for (long b = 0; b < BATCHES; b++) {
        long start = now(CLOCK_MONOTONIC);
        if (!hand_off(s, 1 + 2 * (WARM_ROUND_TRIPS + b * BATCH), BATCH, tick)) break;
        long batch = (now(CLOCK_MONOTONIC) - start) / BATCH;
        if (took < 0 || batch < took) took = batch;
      }
    long wall = now(CLOCK_REALTIME);
    int cpu = 1 + (int)(s % (cpus - 1));
    /* No batch done, or none under a microsecond a round trip: the partner never had its CPU throughout one. */
    if (took < 0 || took > 1000) printf("%ld.%09ld\t%d\t-\n", wall / 1000000000L, wall % 1000000000L, cpu);
    else printf("%ld.%09ld\t%d\t%ld\n", wall / 1000000000L, wall % 1000000000L, cpu, took);
  }
}

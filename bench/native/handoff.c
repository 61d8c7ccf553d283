/* The floor of a same-node half round trip: two threads hand a counter to each other through shared memory, with
 * nothing else, for scale beside shared-memory ping-pongs (docs/bench-log/2026-11-27-fewer-steps-per-small-message.md,
 * "Fewer steps per small message").
 * "one line": the counter and a byte of data share a cache line; "two lines": the counter has a line of its own and
 * the data another, as a ring's tail index and its bytes do. Prints the half round trip of each, three times.
 * Usage: cc -O2 -pthread -o handoff bench/native/handoff.c && ./handoff */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct { _Alignas(64) _Atomic long counter; char data[56]; } one_line;
typedef struct { _Alignas(64) _Atomic long counter; _Alignas(64) char data[64]; } two_lines;

static one_line ping1, pong1;
static two_lines ping2, pong2;
static volatile char sink;
static const long rounds = 2000000;
static int layout; /* 1 or 2 */

static void hand(long i, one_line *a, two_lines *b) {
  if (layout == 1) { a->data[0] = (char)i; atomic_store_explicit(&a->counter, i, memory_order_release); }
  else { b->data[0] = (char)i; atomic_store_explicit(&b->counter, i, memory_order_release); }
}

static void take(long i, one_line *a, two_lines *b) {
  _Atomic long *counter = layout == 1 ? &a->counter : &b->counter;
  while (atomic_load_explicit(counter, memory_order_acquire) != i) __builtin_ia32_pause();
  sink = layout == 1 ? a->data[0] : b->data[0];
}

static void *partner(void *unused) {
  (void)unused;
  for (long i = 1; i <= rounds; i++) {
    take(i, &ping1, &ping2);
    hand(i, &pong1, &pong2);
  }
  return NULL;
}

int main(void) {
  for (int repeat = 0; repeat < 3; repeat++) {
    for (layout = 1; layout <= 2; layout++) {
      memset(&ping1, 0, sizeof ping1), memset(&pong1, 0, sizeof pong1);
      memset(&ping2, 0, sizeof ping2), memset(&pong2, 0, sizeof pong2);
      pthread_t thread;
      pthread_create(&thread, NULL, partner, NULL);
      struct timespec start, end;
      clock_gettime(CLOCK_MONOTONIC, &start);
      for (long i = 1; i <= rounds; i++) {
        hand(i, &ping1, &ping2);
        take(i, &pong1, &pong2);
      }
      clock_gettime(CLOCK_MONOTONIC, &end);
      pthread_join(thread, NULL);
      double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
      printf("%s: %.0f ns per half round trip\n", layout == 1 ? "one line" : "two lines", seconds / rounds / 2 * 1e9);
    }
  }
  return 0;
}

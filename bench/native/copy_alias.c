/* How fast this machine copies bytes as a function of where the destination sits relative to the source within a
 * 4 KB page, for docs/bench-log/2026-11-27-network-4mb.md (A 4 MB message over the network). Two measurements:
 *   memcpy: 64 KB copies (glibc's `rep movsb` range) with the destination 0..4088 bytes past the source, mod 4096;
 *   tcp:    a 4 MB ping-pong over TCP loopback between two processes, each message a small header write and then the
 *           payload from a buffer at a given offset in its page: the kernel copies the payload from the buffer into
 *           its socket pages and out of them into the peer's buffer, both with `rep movsb` where the CPU has FSRM.
 * No MPI. Build and run: gcc -O2 -o copy_alias bench/native/copy_alias.c && ./copy_alias */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Mean microseconds per 64 KB memcpy with the destination `distance` bytes past the source (mod 4096). */
static double copy_us(char *from, char *to, int distance) {
  const int n = 64 * 1024, calls = 500;
  char *dst = to + distance;
  double start = now();
  for (int i = 0; i < calls; i++) {
    memcpy(dst, from, n);
    __asm__ volatile("" : : "r"(dst) : "memory"); /* keep every copy */
  }
  return (now() - start) / calls * 1e6;
}

static void write_all(int s, const char *p, size_t n) {
  for (ssize_t k; n > 0; p += k, n -= (size_t)k)
    if ((k = write(s, p, n)) <= 0) { perror("write"); exit(1); }
}

static void read_all(int s, char *p, size_t n) {
  for (ssize_t k; n > 0; p += k, n -= (size_t)k)
    if ((k = read(s, p, n)) <= 0) { perror("read"); exit(1); }
}

/* MB/s of a 4 MB TCP loopback ping-pong: each message `header` bytes, then 4 MB from `offset` bytes into a page. */
static double tcp_mb_per_s(int offset, int header) {
  const size_t n = 4 << 20;
  const int warm = 10, round_trips = 60;
  int listener = socket(AF_INET, SOCK_STREAM, 0), one = 1;
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof address;
  if (bind(listener, (void *)&address, sizeof address) || getsockname(listener, (void *)&address, &length) || listen(listener, 1)) {
    perror("listen");
    exit(1);
  }
  pid_t child = fork();
  int s = child == 0 ? socket(AF_INET, SOCK_STREAM, 0) : accept(listener, NULL, NULL);
  if (child == 0 && connect(s, (void *)&address, sizeof address)) { perror("connect"); exit(1); }
  setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  char *page = aligned_alloc(4096, n + 8192), *buffer = page + offset, head[64] = {0};
  memset(buffer, 1, n);
  double start = 0;
  for (int i = 0; i < warm + round_trips; i++) {
    if (i == warm) start = now();
    if (child != 0) { write_all(s, head, header); write_all(s, buffer, n); }
    read_all(s, head, header);
    read_all(s, buffer, n);
    if (child == 0) { write_all(s, head, header); write_all(s, buffer, n); }
  }
  if (child == 0) _exit(0);
  double half_round_trip = (now() - start) / round_trips / 2;
  waitpid(child, NULL, 0);
  close(s);
  close(listener);
  free(page);
  return n / half_round_trip / 1e6;
}

int main(void) {
  char *from = aligned_alloc(4096, 1 << 20), *to = aligned_alloc(4096, 1 << 20);
  memset(from, 1, 1 << 20);
  memset(to, 2, 1 << 20);
  double fast = copy_us(from, to, 0);
  printf("memcpy of 64 KB: %.2f us with the destination 0 bytes past the source (mod 4096); slower than 2x that at:", fast);
  for (int distance = 8; distance < 4096; distance += 8) {
    double us = copy_us(from, to, distance);
    if (us > 2 * fast) printf(" %d (%.1f us)", distance, us);
  }
  printf("\n\ntcp 4 MB ping-pong, MB/s: buffer offset in its page (columns) and header bytes before each payload (rows)\nheader");
  const int offsets[] = {0, 8, 16, 24, 32, 48, 64, 2048}, headers[] = {0, 8, 16, 24, 32, 48, 64};
  for (int o = 0; o < 8; o++) printf("%7d", offsets[o]);
  printf("\n");
  for (int h = 0; h < 7; h++) {
    printf("%6d", headers[h]);
    for (int o = 0; o < 8; o++) printf("%7.0f", tcp_mb_per_s(offsets[o], headers[h]));
    printf("\n");
  }
  return 0;
}

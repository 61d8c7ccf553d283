/* Ping-pong of two processes over TCP loopback, directly or through two relay processes that forward bytes and
 * nothing else: the floor of any relay path on this machine, for scale beside PMPI's gateway pair (bench/gateway.sh).
 * A relay here is as cheap as one can be: one thread, poll on its two sockets, and either read up to 256 KB and
 * write it on ("relayed", what any relay that looks at the bytes must do at least) or move them from socket to
 * socket inside the kernel with splice(2) ("spliced": no copy through the relay, so no framing, TLS or checks are
 * possible); no framing, no TLS, no checks either way. One line per size, "size<TAB>half_rtt_us<TAB>MB/s", with
 * pingpong.c's sizes, iterations and warm-up; relayed or spliced, a fourth column: the CPU time each relay spent
 * per message in the timed loop (µs, from /proc/PID/schedstat: one thread each), what a relay costs at the least.
 * "polled": the copying relays, with endpoints that poll for the answer as an MPI rank does (a non-blocking read,
 * sched_yield, again, for up to 1 ms, then a blocking read) instead of sleeping in read: on a machine whose cores the
 * endpoints share with the relays, what a relay pair gets beside endpoints that poll, as PMPI's ranks do.
 * --cpus A,B puts the pinging endpoint on processor A and the echoing one on B, as two machines would have them, and
 * leaves the relays where the scheduler puts them (bench/gateway.sh places PMPI's two ranks alike).
 * Before the timed sweep, one untimed sweep of every size (a tenth of its iterations), as PMPI's ranks run whole
 * sweeps (--jit-warmup) before theirs is timed: TCP's congestion control treats a connection that has carried only
 * small messages apart from one that has carried large ones (BBR still in its start-up paces at 2.9 times its
 * estimate), and the two sides must be timed in the same state (docs/bench-log/2026-12-01-relay-floor-connection-state.md).
 * Usage: relay_pingpong direct|relayed|spliced|polled [--quick] [--cpus A,B]   (--quick: a tenth of the iterations) */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const int sizes[] = {1, 8, 64, 1024, 8192, 65536, 1 << 20, 4 << 20, 16 << 20};
enum { SIZE_COUNT = sizeof sizes / sizeof sizes[0], RELAY_BLOCK = 256 * 1024 };

static int iterations_for(int n, int quick) {
  int iters = n <= 8192 ? 20000 : (n <= 65536 ? 5000 : 200);
  return quick ? iters / 10 : iters;
}

static void fail(const char *what) {
  perror(what);
  exit(1);
}

static void no_delay(int fd) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0) fail("setsockopt TCP_NODELAY");
}

/* A listening socket on 127.0.0.1 and a free port, which *port receives. */
static int listen_loopback(int *port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t length = sizeof address;
  if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(fd, 1) != 0) fail("listen");
  if (getsockname(fd, (struct sockaddr *)&address, &length) != 0) fail("getsockname");
  *port = ntohs(address.sin_port);
  return fd;
}

static int dial_loopback(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  if (fd < 0 || connect(fd, (struct sockaddr *)&address, sizeof address) != 0) fail("connect");
  no_delay(fd);
  return fd;
}

static int accept_one(int listener) {
  int fd = accept(listener, NULL, NULL);
  if (fd < 0) fail("accept");
  no_delay(fd);
  close(listener);
  return fd;
}

static int polling_endpoints; /* "polled" */

/* Binds the calling process to one processor (a negative one: leaves it where it is). */
static void bind_to(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) fail("sched_setaffinity");
}

static long long now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* A polling endpoint's read: non-blocking reads with the core given away between them, for up to 1 ms. */
static ssize_t read_polling(int fd, char *buffer, int n) {
  for (long long start = now_ns(); now_ns() - start < 1000000;) {
    ssize_t k = recv(fd, buffer, n, MSG_DONTWAIT);
    if (k >= 0 || errno != EAGAIN) return k;
    sched_yield();
  }
  return read(fd, buffer, n);
}

static void read_exactly(int fd, char *buffer, int n) {
  for (int got = 0; got < n;) {
    ssize_t k = polling_endpoints ? read_polling(fd, buffer + got, n - got) : read(fd, buffer + got, n - got);
    if (k <= 0) fail("read");
    got += k;
  }
}

static void write_all(int fd, const char *buffer, ssize_t n) {
  for (ssize_t put = 0; put < n;) {
    ssize_t k = write(fd, buffer + put, n - put);
    if (k <= 0) fail("write");
    put += k;
  }
}

/* A child that dies with its parent, so nothing outlives a killed run. */
static pid_t child(void) {
  pid_t pid = fork();
  if (pid < 0) fail("fork");
  if (pid == 0 && prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) fail("prctl");
  return pid;
}

/* The CPU time a single-threaded process has spent, in ns (its thread's first schedstat field). */
static long long cpu_ns(pid_t pid) {
  char path[64];
  long long ns = 0;
  snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
  FILE *file = fopen(path, "r");
  if (file == NULL || fscanf(file, "%lld", &ns) != 1) fail("schedstat");
  fclose(file);
  return ns;
}

/* Moves what arrived on `from` to `to` through a pipe, inside the kernel; 0 once `from` closed. */
static ssize_t splice_on(int from, int to, int pipe_ends[2]) {
  ssize_t k = splice(from, NULL, pipe_ends[1], NULL, RELAY_BLOCK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
  for (ssize_t left = k; left > 0;) {
    ssize_t moved = splice(pipe_ends[0], NULL, to, NULL, left, SPLICE_F_MOVE);
    if (moved <= 0) fail("splice");
    left -= moved;
  }
  return k;
}

/* Forwards whatever arrives on either socket to the other until one end closes. */
static void relay(int listener, int next_port, int spliced) {
  int in = accept_one(listener), out = dial_loopback(next_port);
  char *buffer = malloc(RELAY_BLOCK);
  int pipes[2][2];
  if (spliced && (pipe(pipes[0]) != 0 || pipe(pipes[1]) != 0)) fail("pipe");
  struct pollfd fds[2] = {{.fd = in, .events = POLLIN}, {.fd = out, .events = POLLIN}};
  for (;;) {
    if (poll(fds, 2, -1) < 0) fail("poll");
    for (int i = 0; i < 2; i++) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      ssize_t k = spliced ? splice_on(fds[i].fd, fds[1 - i].fd, pipes[i]) : read(fds[i].fd, buffer, RELAY_BLOCK);
      if (k <= 0) exit(0);
      if (!spliced) write_all(fds[1 - i].fd, buffer, k);
    }
  }
}

/* The sweep before the timed one: every size, a tenth of its iterations, pinged or echoed. */
static void untimed_sweep(int fd, int quick, char *buffer, int echoing) {
  for (int s = 0; s < SIZE_COUNT; s++) {
    for (int i = 0; i < iterations_for(sizes[s], quick) / 10; i++) {
      if (echoing) read_exactly(fd, buffer, sizes[s]);
      write_all(fd, buffer, sizes[s]);
      if (!echoing) read_exactly(fd, buffer, sizes[s]);
    }
  }
}

static void echo(int listener, int quick, char *buffer, int cpu) {
  bind_to(cpu);
  int fd = accept_one(listener);
  untimed_sweep(fd, quick, buffer, 1);
  for (int s = 0; s < SIZE_COUNT; s++) {
    int iters = iterations_for(sizes[s], quick);
    for (int i = 0; i < iters + iters / 10; i++) {
      read_exactly(fd, buffer, sizes[s]);
      write_all(fd, buffer, sizes[s]);
    }
  }
  exit(0);
}

int main(int argc, char **argv) {
  int spliced = argc > 1 && strcmp(argv[1], "spliced") == 0;
  polling_endpoints = argc > 1 && strcmp(argv[1], "polled") == 0;
  int relayed = spliced || polling_endpoints || (argc > 1 && strcmp(argv[1], "relayed") == 0), quick = 0, usage = argc < 2;
  int pinger_cpu = -1, echo_cpu = -1;
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = 1;
    else if (strcmp(argv[i], "--cpus") == 0 && i + 1 < argc && sscanf(argv[++i], "%d,%d", &pinger_cpu, &echo_cpu) == 2) continue;
    else usage = 1;
  }
  if (usage || (!relayed && strcmp(argv[1], "direct") != 0)) {
    fprintf(stderr, "usage: relay_pingpong direct|relayed|spliced|polled [--quick] [--cpus A,B]\n");
    return 2;
  }
  char *buffer = calloc(1, sizes[SIZE_COUNT - 1]);
  int port, listener = listen_loopback(&port);
  if (child() == 0) echo(listener, quick, buffer, echo_cpu);
  close(listener);
  pid_t relays[2];
  if (relayed) {
    /* The pinger dials relay 1, which dials relay 2, which dials the echo: three TCP hops instead of one. */
    for (int hop = 0; hop < 2; hop++) {
      int relay_port, relay_listener = listen_loopback(&relay_port);
      if ((relays[hop] = child()) == 0) relay(relay_listener, port, spliced);
      close(relay_listener);
      port = relay_port;
    }
  }
  bind_to(pinger_cpu); /* after the relays are forked, which stay free */
  int fd = dial_loopback(port);
  untimed_sweep(fd, quick, buffer, 0);
  for (int s = 0; s < SIZE_COUNT; s++) {
    int n = sizes[s], iters = iterations_for(n, quick);
    for (int i = 0; i < iters / 10; i++) {
      write_all(fd, buffer, n);
      read_exactly(fd, buffer, n);
    }
    struct timespec start, end;
    long long relays_before = relayed ? cpu_ns(relays[0]) + cpu_ns(relays[1]) : 0;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < iters; i++) {
      write_all(fd, buffer, n);
      read_exactly(fd, buffer, n);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    double seconds = (end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
    double half_rtt_us = seconds / iters / 2 * 1e6;
    if (relayed) {
      /* Each round trip is two messages, each through both relays. */
      double relay_us = (cpu_ns(relays[0]) + cpu_ns(relays[1]) - relays_before) / 1e3 / 2 / (2.0 * iters);
      printf("%d\t%.2f\t%.2f\t%.2f\n", n, half_rtt_us, n / half_rtt_us, relay_us);
    } else {
      printf("%d\t%.2f\t%.2f\n", n, half_rtt_us, n / half_rtt_us);
    }
    fflush(stdout);
  }
  close(fd);
  while (wait(NULL) > 0) {
  }
  return 0;
}

#!/usr/bin/env bash
# Ping-pong through one gateway pair beside the same two ranks talking directly, in one run on one machine.
#
#   bench/gateway.sh [--quick] [--rounds N] [--timeout SECONDS] [--h2c] [--congestion ALGORITHM] [--free]
#
# Two `pmpi agent` processes serve domains a and b and two `pmpi gateway` processes serve them, all on loopback under
# one throwaway cluster credential (mutual TLS between the daemons). The two ranks of `Pmpi.Bench pingpong --device
# grpc` run one per domain. "direct": the computation declares each domain reachable from the other, so the ranks dial
# each other (h2c, as ranks on loopback do). "gateways": it does not, so every message crosses rank -> gateway a ->
# gateway b -> rank, on connections the gateways relay as opaque bytes after the rank's relay preamble, carrying the
# same h2c the direct path speaks (ranks beyond loopback would speak their pinned TLS end to end, unread by the
# gateways). Only the route differs. Each round runs both, in an order that
# reverses from one round to the next; the table gives per size the median half round trip and bandwidth of each and
# the median ratio with its min–max over the rounds. Goals (issue 10): latency at most 2x direct; at least 70% of
# direct bandwidth at 1 MB and up. --h2c runs every daemon with --insecure (cleartext, loopback only); the relayed
# streams carry no TLS of the gateways' either way, only their control calls do. For scale, each round also runs bench/native/relay_pingpong.c directly and through two
# relay processes that forward bytes and nothing else, copying them or splicing them inside the kernel: what any
# relay pair costs on this machine, timed after an untimed sweep as the ranks are after theirs; and through the
# copying relays between endpoints that poll for the answer, as PMPI's ranks do, instead of sleeping in read. After the rounds, each gateway's CPU time per relayed message (at 1 B) and per
# relayed megabyte (at 4 MB). Every hop is TCP over loopback under the machine's congestion control, which the report
# names: BBR, where the machine uses it, paces each hop on loopback (docs/bench-log/2026-11-30-relays-under-bbr.md).
# --congestion ALGORITHM (root, iproute2) runs the daemons, the ranks and the C programs in a network namespace of
# their own whose loopback uses that algorithm (cubic, say), leaving the machine's setting alone; the namespace is
# removed on exit. Each domain is one node, and as two machines would, the two nodes have a processor each: agent a
# runs on the first processor this shell may use and agent b on the second (taskset; a rank alone on its node keeps its
# agent's processor), and relay_pingpong's two endpoints likewise; the relays, gateways or C, run wherever the
# scheduler puts them. --free leaves the ranks and endpoints there too, where two ranks may take turns on one core
# (docs/bench-log/2026-12-01-gateway-bench-placement.md). Needs a C compiler (cc). Every child runs under `timeout`;
# every process started here is killed on exit.
set -euo pipefail

quick=0
h2c=0
congestion=
free=0
rounds=
child_timeout=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick=1 ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift ;;
    --timeout) child_timeout="${2:?--timeout needs seconds}"; shift ;;
    --h2c) h2c=1 ;;
    --congestion) congestion="${2:?--congestion needs an algorithm, such as cubic}"; shift ;;
    --free) free=1 ;;
    -h|--help) sed -n '2,/^set -e/{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gateway.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
rounds="${rounds:-$([[ $quick -eq 1 ]] && echo 2 || echo 5)}"
quick_flag=$([[ $quick -eq 1 ]] && echo --quick || true)

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
namespace=
cleanup() {
  # Each daemon's `timeout` wrapper and the daemon under it, by the ids start() recorded.
  local pid
  for pid in $(cat "$work"/*.pid 2>/dev/null); do pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
  sleep 1
  [[ -n "$namespace" ]] && ip netns delete "$namespace" 2>/dev/null
  [[ -n "${PMPI_BENCH_KEEP:-}" ]] && echo "gateway.sh: kept $work" >&2 || rm -rf "$work"
}
trap cleanup EXIT
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

# The daemons run as they are deployed (deploy/README.md: the CLI's linux-x64 publish is a Native AOT executable), as
# in bench/run.sh: a JIT-compiled gateway spends its first minute compiling ASP.NET Core's and YARP's code again at
# tier 1, on the cores the relayed ping-pong needs.
echo "gateway.sh: building bench/Pmpi.Bench and publishing the pmpi CLI (Release, Native AOT)" >&2
timeout 600 dotnet build "$repo/bench/Pmpi.Bench" -c Release -v quiet -nologo >"$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; echo "gateway.sh: building bench/Pmpi.Bench failed." >&2; exit 1; }
timeout 900 dotnet publish "$repo/src/Pmpi.Cli" -c Release -r linux-x64 -o "$work/cli" -v quiet -nologo >"$work/build.log" 2>&1 \
  || { cat "$work/build.log" >&2; echo "gateway.sh: publishing src/Pmpi.Cli failed." >&2; exit 1; }
command -v cc >/dev/null || { echo "gateway.sh: cc not found. Install a C compiler first: apt-get install -y gcc" >&2; exit 1; }
timeout 120 cc -O2 -o "$work/relay_pingpong" "$repo/bench/native/relay_pingpong.c"
bench_dll="$repo/bench/Pmpi.Bench/bin/Release/net10.0/Pmpi.Bench.dll"
# in_namespace COMMAND...: runs COMMAND where the bench's processes run (with --congestion, in their namespace).
in_namespace=()
if [[ -n "$congestion" ]]; then
  namespace="pmpi-gateway-bench-$$"
  ip netns add "$namespace"
  ip -n "$namespace" link set lo up
  in_namespace=(ip netns exec "$namespace")
  "${in_namespace[@]}" sysctl -qw "net.ipv4.tcp_congestion_control=$congestion" \
    || { echo "gateway.sh: the kernel has no TCP congestion control '$congestion' (see /proc/sys/net/ipv4/tcp_available_congestion_control)." >&2; exit 1; }
fi
# Each domain's node on a processor of its own (see above): node_a and node_b prefix its agent, floor_cpus its endpoints.
node_a=() node_b=() floor_cpus=() placement="the ranks and endpoints free"
processors=($(python3 -c 'import os; print(*sorted(os.sched_getaffinity(0)))'))
if [[ $free -eq 0 && ${#processors[@]} -ge 2 ]]; then
  node_a=(taskset -c "${processors[0]}") node_b=(taskset -c "${processors[1]}") floor_cpus=(--cpus "${processors[0]},${processors[1]}")
  placement="domain a's rank and endpoint on processor ${processors[0]}, domain b's on ${processors[1]}, the relays free"
fi
pmpi="$work/cli/pmpi"
if [[ $h2c -eq 1 ]]; then
  security=(--insecure)
else
  "$pmpi" cluster init --dir "$work/cluster" >/dev/null
  security=(--credentials "$work/cluster")
fi

# start NAME LINE COMMAND...: a daemon in the background, once it printed its listening line; its port on stdout.
# Called in a command substitution (a subshell), so it records the daemon's id in a file for cleanup().
start() {
  local name="$1" line="$2" i; shift 2
  "${in_namespace[@]}" timeout "$((child_timeout * 2 * rounds + 120))" "$@" >"$work/$name.out" 2>"$work/$name.err" &
  echo $! >"$work/$name.pid"
  for ((i = 0; i < 300; i++)); do
    if grep -q "$line" "$work/$name.out"; then grep -o '127.0.0.1:[0-9]*' "$work/$name.out" | head -1 | cut -d: -f2; return; fi
    sleep 0.1
  done
  cat "$work/$name.err" >&2; echo "gateway.sh: $name did not start." >&2; exit 1
}
agent_a=$(start agent-a "pmpi agent listening" "${node_a[@]}" "$pmpi" agent --port 0 --slots 1 --domain a "${security[@]}")
agent_b=$(start agent-b "pmpi agent listening" "${node_b[@]}" "$pmpi" agent --port 0 --slots 1 --domain b "${security[@]}")
gateway_a=$(start gateway-a "pmpi gateway listening" "$pmpi" gateway --domain a --bind 127.0.0.1 --port 0 "${security[@]}")
gateway_b=$(start gateway-b "pmpi gateway listening" "$pmpi" gateway --domain b --bind 127.0.0.1 --port 0 "${security[@]}")

# computation ROUTE [SIZE...]: rank 0 in domain a, rank 1 in domain b; "direct" declares the domains reachable both
# ways. With sizes, the ping-pong runs those (each once, in full, even with --quick) instead of its sweep.
computation() {
  local route="$1" reach_a="" reach_b="" size sizes_args=""; shift
  [[ "$route" == direct ]] && reach_a=' reachable="b"' && reach_b=' reachable="a"'
  if [[ $# -gt 0 ]]; then sizes_args="<arg>--sizes</arg>"; for size in "$@"; do sizes_args+="<arg>$size</arg>"; done; fi
  cat <<XML
<computation name="gateway-bench" xmlns="urn:pmpi:computation:v1">
  <domain name="a" gateway="127.0.0.1:$gateway_a"$reach_a/>
  <domain name="b" gateway="127.0.0.1:$gateway_b"$reach_b/>
  <node name="a1" agent="127.0.0.1:$agent_a" domain="a" slots="1"/>
  <node name="b1" agent="127.0.0.1:$agent_b" domain="b" slots="1"/>
  <ranks program="$bench_dll" count="2">
    <arg>pingpong</arg><arg>--device</arg><arg>grpc</arg><arg>--jit-warmup</arg>$([[ -n "$quick_flag" && -z "$sizes_args" ]] && echo "<arg>--quick</arg>")$sizes_args
    <arg>--timeout</arg><arg>$child_timeout</arg>
  </ranks>
</computation>
XML
}
computation direct >"$work/direct.xml"
computation gateways >"$work/gateways.xml"

run() {
  local route="$1"
  echo "gateway.sh: [round $round/$rounds] $route" >&2
  "${in_namespace[@]}" timeout "$child_timeout" "$pmpi" run --master "127.0.0.1:$agent_a" "${security[@]}" "$work/$route.xml" \
    >"$work/$route.$round" 2>"$work/$route.$round.err" \
    || { tail -5 "$work/$route.$round.err" >&2; echo "gateway.sh: $route in round $round failed." >&2; : >"$work/$route.$round"; }
}
# floor MODE: the native ping-pong, direct or through two byte relays (relayed: copying; spliced: in the kernel;
# polled: copying, between endpoints that poll for the answer as MPI ranks do instead of sleeping in read).
floor() {
  echo "gateway.sh: [round $round/$rounds] native $1" >&2
  "${in_namespace[@]}" timeout "$child_timeout" "$work/relay_pingpong" "$1" $quick_flag "${floor_cpus[@]}" >"$work/native-$1.$round" 2>"$work/native-$1.$round.err" \
    || { tail -5 "$work/native-$1.$round.err" >&2; echo "gateway.sh: native $1 in round $round failed." >&2; : >"$work/native-$1.$round"; }
}
for ((round = 1; round <= rounds; round++)); do
  if (( round % 2 )); then run direct; run gateways; floor direct; floor relayed; floor spliced; floor polled
  else floor polled; floor spliced; floor relayed; floor direct; run gateways; run direct; fi
done

# What relaying costs the gateways: the pair's CPU time (utime + stime of both processes) over a run of one size
# repeated three times, less that over a run of it once, divided by what the two extra passes relayed. The job's start,
# the JIT warm-up and the streams' setup are in both runs and cancel out. 1 B gives the cost of a message, 4 MB that
# of a byte.
cpu_ticks() {
  local name total=0
  for name in gateway-a gateway-b; do
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$(pgrep -P "$(cat "$work/$name.pid")")/stat")))
  done
  echo "$total"
}
cpu_sizes=(1 4194304)
for size in "${cpu_sizes[@]}"; do
  for passes in 1 3; do
    computation gateways $(for ((p = 0; p < passes; p++)); do echo "$size"; done) >"$work/cpu.xml"
    echo "gateway.sh: gateway CPU, $size B x $passes" >&2
    before=$(cpu_ticks)
    "${in_namespace[@]}" timeout "$child_timeout" "$pmpi" run --master "127.0.0.1:$agent_a" "${security[@]}" "$work/cpu.xml" >"$work/cpu-$size-$passes" 2>"$work/cpu-$size-$passes.err" \
      || { tail -5 "$work/cpu-$size-$passes.err" >&2; echo "gateway.sh: the CPU run of $size B x $passes failed." >&2; }
    echo "$(( $(cpu_ticks) - before ))" >"$work/cpu-$size-$passes.ticks"
  done
done
"${in_namespace[@]}" "$pmpi" gateway status "127.0.0.1:$gateway_a" "127.0.0.1:$gateway_b" "${security[@]}" >&2

echo "# bench/gateway.sh, $rounds rounds$([[ $quick -eq 1 ]] && echo ", --quick")$([[ $h2c -eq 1 ]] && echo ", --h2c"), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores, TCP congestion control $("${in_namespace[@]}" cat /proc/sys/net/ipv4/tcp_congestion_control)$([[ -n "$congestion" ]] && echo " (--congestion: the bench's own network namespace)"), $placement"
python3 - "$work" "$rounds" "$(getconf CLK_TCK)" "${cpu_sizes[@]}" <<'PY'
import statistics, sys
work, rounds, ticks_per_second, cpu_sizes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), [int(size) for size in sys.argv[4:]]
def load(route, r):
    rows = {}
    try:
        for line in open(f"{work}/{route}.{r}"):
            parts = line.strip().removeprefix("[0] ").split("\t")
            if len(parts) >= 3 and parts[0].isdigit():
                rows[int(parts[0])] = tuple(float(part) for part in parts[1:])
    except FileNotFoundError:
        pass
    return rows
def span(values):
    return f"{statistics.median(values):.2f} ({min(values):.2f}–{max(values):.2f})"
def table(direct, relayed, names):
    pairs = [(load(direct, r), load(relayed, r)) for r in range(1, rounds + 1)]
    pairs = [(d, g) for d, g in pairs if d and g]
    if not pairs:
        sys.exit(f"gateway.sh: no round produced both {direct} and {relayed}.")
    print(f"| size | {names[0]} half RTT µs | {names[1]} half RTT µs | latency ratio (goal ≤ 2) | {names[0]} MB/s | {names[1]} MB/s | bandwidth ratio (goal ≥ 0.7 from 1 MB) |")
    print("|---|---|---|---|---|---|---|")
    for size in sorted(pairs[0][0]):
        both = [(d[size], g[size]) for d, g in pairs if size in d and size in g]
        lat = [g[0] / d[0] for d, g in both]
        bw = [d[0] / g[0] for d, g in both]  # same bytes per round trip: the bandwidth ratio is the inverse of the latency ratio
        label = f"{size >> 20} MB" if size >= 1 << 20 else f"{size >> 10} KB" if size >= 1024 else f"{size} B"
        print(f"| {label} | {statistics.median(d[0] for d, _ in both):.1f} | {statistics.median(g[0] for _, g in both):.1f} | {span(lat)} | "
              f"{statistics.median(d[1] for d, _ in both):.0f} | {statistics.median(g[1] for _, g in both):.0f} | {span(bw)} |")
    print(f"\n{len(pairs)} of {rounds} rounds produced both runs.\n")
print("PMPI: two ranks directly, and through the gateway pair\n")
table("direct", "gateways", ("direct", "gateways"))
print("For scale, the floor of any relay pair here: bench/native/relay_pingpong.c over TCP, directly and through two relays that copy the bytes on\n")
table("native-direct", "native-relayed", ("TCP direct", "TCP relayed"))
print("The same through two relays that splice the bytes on inside the kernel (no framing, TLS or checks possible)\n")
table("native-direct", "native-spliced", ("TCP direct", "TCP spliced"))
def against_floor(floor, title, goals):
    """The gateway pair beside a relay pair of the same rounds; with goals, issue 52's judged."""
    pairs = [(load("gateways", r), load(floor, r)) for r in range(1, rounds + 1)]
    pairs = [(g, c) for g, c in pairs if g and c]
    print(title + "\n")
    print(f"| size | gateways half RTT µs | relays half RTT µs | latency ratio | bandwidth ratio |{' goal |' if goals else ''}")
    print(f"|---|---|---|---|---|{'---|' if goals else ''}")
    for size in sorted(pairs[0][0]) if pairs else []:
        both = [(g[size], c[size]) for g, c in pairs if size in g and size in c]
        lat = [g[0] / c[0] for g, c in both]
        bw = [c[0] / g[0] for g, c in both]
        label = f"{size >> 20} MB" if size >= 1 << 20 else f"{size >> 10} KB" if size >= 1024 else f"{size} B"
        goal = ""
        if goals and size <= 1024:
            goal = f"latency ≤ 1.5×: {'met' if statistics.median(lat) <= 1.5 else 'missed'} ({sum(x <= 1.5 for x in lat)} of {len(lat)} rounds)"
        elif goals and size >= 1 << 20:
            goal = f"bandwidth ≥ 0.7×: {'met' if statistics.median(bw) >= 0.7 else 'missed'} ({sum(x >= 0.7 for x in bw)} of {len(bw)} rounds)"
        print(f"| {label} | {statistics.median(g[0] for g, _ in both):.1f} | {statistics.median(c[0] for _, c in both):.1f} | {span(lat)} | {span(bw)} |{f' {goal} |' if goals else ''}")
    print()
against_floor("native-relayed", "The gateway pair beside the copying relay pair of the same rounds (goals: latency ≤ 1.5× from 1 B to 1 KB, bandwidth ≥ 0.7× from 1 MB)", goals=True)
against_floor("native-polled", "The same beside copying relays whose endpoints poll for the answer as PMPI's ranks do (on these shared cores a polling endpoint\n"
              "takes time from the relays, and a blocking one does not: this separates what the gateways cost from what the ranks' polling costs)", goals=False)
def iterations(size):  # PingPongBenchmark.IterationsFor, in full, and its warm-up tenth
    iterations = 20000 if size <= 8192 else 5000 if size <= 65536 else 200
    return iterations + iterations // 10
def relay_cpu(mode, size):  # a C relay's CPU per message (relay_pingpong's fourth column), median over the rounds
    values = [rows[size][2] for rows in (load(f"native-{mode}", r) for r in range(1, rounds + 1)) if size in rows and len(rows[size]) > 2]
    return statistics.median(values) if values else float("nan")
print("What relaying costs: each gateway's CPU time (the pair's over a run of one size three times, less once, over what the two extra\n"
      "passes relayed: each round trip is two messages, each through both gateways), beside each C relay's in the rounds above\n"
      "(relay_pingpong.c: its one thread's CPU time over the timed loop); per message at 1 B, per MB relayed (and the rate that makes\n"
      "on one core) at 4 MB\n")
print("| size | relayed | each gateway | each copying C relay | each splicing C relay | each copying C relay, endpoints polling |")
print("|---|---|---|---|---|---|")
for size in cpu_sizes:
    try:
        ticks = [int(open(f"{work}/cpu-{size}-{passes}.ticks").read()) for passes in (1, 3)]
        done = all(open(f"{work}/cpu-{size}-{passes}").read().strip() for passes in (1, 3))
    except (FileNotFoundError, ValueError):
        done = False
    label = f"{size >> 20} MB" if size >= 1 << 20 else f"{size} B"
    if not done:
        print(f"| {label} | the runs failed | | | | |")
        continue
    messages = 2 * 2 * iterations(size)
    seconds = (ticks[1] - ticks[0]) / ticks_per_second / 2  # each gateway's share
    relays = [relay_cpu(mode, size) / 1e6 for mode in ("relayed", "spliced", "polled")]  # seconds a message
    if size < 1 << 20:
        cells = [f"{per_message * 1e6:.1f} µs a message" for per_message in [seconds / messages, *relays]]
        print(f"| {label} | {messages:,} messages | {' | '.join(cells)} |")
    else:
        megabytes = size / 1e6
        cells = [f"{per_mb * 1e3:.2f} ms a MB ({1 / per_mb:,.0f} MB/s)" for per_mb in [seconds / (messages * megabytes), *(relay / megabytes for relay in relays)]]
        print(f"| {label} | {messages * megabytes / 1e3:,.1f} GB | {' | '.join(cells)} |")
print()
PY

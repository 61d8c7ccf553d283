#!/usr/bin/env bash
# What one ping-pong round trip costs each side besides time, PMPI beside Open MPI in one run: context switches
# (voluntary and involuntary, every thread of both rank processes, from /proc/self/task/*/status around the timed loop),
# system calls (every thread's, counted by `perf record -e raw_syscalls:sys_enter` in each rank's timed loop, by kind)
# and, for PMPI, bytes allocated and gen-0 collections. Four runs, each with --counters: Open MPI over TCP loopback
# beside PMPI's gRPC device (`pmpi run --links network -n 2`), and Open MPI shared memory beside PMPI's (`pmpi run -n 2`).
#
#   bench/counters.sh [--quick] [--timeout SECONDS]
#
# Prints a Markdown table per pair. Counts move far less with the machine's load than times do, so one run of each
# says where a message's cost goes; bench/run.sh measures the times. Needs mpicc, mpirun, python3 and the .NET SDK; the
# system calls need perf (apt-get install -y linux-perf) and root or kernel.perf_event_paranoid=-1, and are left out
# without them. Tracing slows each call a little, so a polling loop makes fewer polls per round trip than untraced.
set -euo pipefail

quick_flag=
child_timeout=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick_flag=--quick ;;
    --timeout) child_timeout="${2:?--timeout needs seconds}"; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "counters.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
for tool in mpicc mpirun dotnet python3 timeout; do
  command -v "$tool" >/dev/null || { echo "counters.sh: $tool not found (Open MPI: apt-get install -y openmpi-bin libopenmpi-dev)." >&2; exit 1; }
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

echo "counters.sh: building bench/native/pingpong.c, bench/Pmpi.Bench and the pmpi CLI (Release)" >&2
timeout 120 mpicc -O2 -o "$work/pingpong" "$repo/bench/native/pingpong.c"
for project in bench/Pmpi.Bench src/Pmpi.Cli; do
  timeout 600 dotnet build "$repo/$project" -c Release -v quiet -nologo >"$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; echo "counters.sh: building $project failed." >&2; exit 1; }
done
bench_dll="$repo/bench/Pmpi.Bench/bin/Release/net10.0/Pmpi.Bench.dll"
pmpi=(dotnet "$repo/src/Pmpi.Cli/bin/Release/net10.0/pmpi.dll" run)
ompi=(mpirun --allow-run-as-root)

# perf may trace system calls here: then each run is recorded, and its calls are counted in the ranks' timed windows.
syscalls=0
if command -v perf >/dev/null && perf record -q -e raw_syscalls:sys_enter -o "$work/probe.perf" -- true >/dev/null 2>&1; then
  syscalls=1
else
  echo "counters.sh: perf cannot trace system calls here (apt-get install -y linux-perf; root or" \
    "kernel.perf_event_paranoid=-1): the tables leave them out." >&2
fi

run() {
  local kind="$1" trace=(); shift
  echo "counters.sh: $kind" >&2
  [[ $syscalls -eq 1 ]] && trace=(perf record -q -e raw_syscalls:sys_enter -k CLOCK_MONOTONIC -m 16M -o "$work/$kind.perf" --)
  # pmpi run puts each rank's lines behind "[rank] ".
  (cd "$work" && timeout "$child_timeout" "${trace[@]}" "$@") | sed 's/^\[[0-9]*\] //' | grep '^# counters' >"$work/$kind" \
    || { echo "counters.sh: $kind failed." >&2; exit 1; }
  if [[ $syscalls -eq 1 ]]; then
    local lost
    lost=$(perf report -i "$work/$kind.perf" --stats 2>/dev/null \
      | awk '/LOST/ { for (i = 1; i < NF; i++) if ($i == "events:" && $(i + 1) + 0 > n) n = $(i + 1) + 0 } END { print n + 0 }')
    [[ $lost -eq 0 ]] || echo "counters.sh: perf lost $lost of $kind's system call events: its counts are low." >&2
    perf script -i "$work/$kind.perf" -F pid,tid,time,trace --ns 2>/dev/null | python3 "$work/calls.py" "$work/$kind" >"$work/$kind.calls"
    rm -f "$work/$kind.perf"
  fi
}

# calls.py COUNTERS: reads perf script's lines ("pid/tid seconds.ns: NR n ...") and prints, per rank line of COUNTERS,
# "size<TAB>rank<TAB>name=count ..." for the system calls the rank's process made in its timed window, per round trip.
cat >"$work/calls.py" <<'PY'
import re, sys
from collections import Counter

names = {}
for header in ("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "/usr/include/asm/unistd_64.h"):
    try:
        for line in open(header, encoding="utf-8"):
            match = re.match(r"#define __NR_(\w+) (\d+)", line)
            if match:
                names[int(match[2])] = match[1]
        break
    except OSError:
        pass

windows = []  # (pid, start ns, end ns, size, rank, round trips, Counter)
for line in open(sys.argv[1], encoding="utf-8"):
    fields = line.split()
    rank, size, round_trips, pid, start, end = fields[2], fields[3], fields[8], fields[9], fields[10], fields[11]
    windows.append((int(pid), int(start), int(end), size, rank, int(round_trips), Counter()))
by_pid = {}
for window in windows:
    by_pid.setdefault(window[0], []).append(window)
for line in sys.stdin:
    match = re.match(r"\s*(\d+)/\d+\s+(\d+)\.(\d{9}):\s+NR (\d+)", line)
    if not match or int(match[1]) not in by_pid:
        continue
    at = int(match[2]) * 1_000_000_000 + int(match[3])
    for pid, start, end, _, _, _, calls in by_pid[int(match[1])]:
        if start <= at <= end:
            calls[names.get(int(match[4]), f"NR {match[4]}")] += 1
for _, _, _, size, rank, round_trips, calls in windows:
    print(size, rank, " ".join(f"{name}={count / round_trips:.2f}" for name, count in calls.items()), sep="\t")
PY
run ompi-tcp "${ompi[@]}" -np 2 --mca btl tcp,self --mca btl_tcp_if_include lo ./pingpong --counters $quick_flag
run pmpi-network "${pmpi[@]}" --links network -n 2 "$bench_dll" -- pingpong --device grpc --jit-warmup --counters $quick_flag
run ompi-sm "${ompi[@]}" -np 2 ./pingpong --counters $quick_flag
run pmpi-shm "${pmpi[@]}" -n 2 "$bench_dll" -- pingpong --device grpc --jit-warmup --counters $quick_flag

python3 - "$work" "$syscalls" <<'PY'
import sys
from collections import Counter, defaultdict

work, with_calls = sys.argv[1], sys.argv[2] == "1"

def load(kind):
    """size -> [voluntary, involuntary, allocated, gen0] summed over ranks 0 and 1 (None where not measured)."""
    totals = defaultdict(lambda: [0.0, 0.0, None, None])
    for line in open(f"{work}/{kind}", encoding="utf-8"):
        _, _, _, size, *values = line.split()
        row = totals[int(size)]
        for i, value in enumerate(values[:4]):
            if value != "-":
                row[i] = (row[i] or 0.0) + float(value)
    return totals

def load_calls(kind):
    """size -> Counter of system calls per round trip, summed over ranks 0 and 1."""
    calls = defaultdict(Counter)
    for line in open(f"{work}/{kind}.calls", encoding="utf-8"):
        size, _, *counts = line.rstrip("\n").split("\t")
        for name, count in (each.split("=") for each in " ".join(counts).split()):
            calls[int(size)][name] += float(count)
    return calls

def calls_cell(calls):
    """The total, then the kinds that make it up, most first (kinds under 0.05 a round trip left out)."""
    kinds = ", ".join(f"{name} {count:.2f}" for name, count in calls.most_common() if count >= 0.05)
    return f"{sum(calls.values()):.2f} ({kinds})" if kinds else f"{sum(calls.values()):.2f}"

def label(size):
    return f"{size >> 20} MB" if size >= 1 << 20 else f"{size >> 10} KB" if size >= 1 << 10 else f"{size} B"

for title, ompi, pmpi in (("Open MPI over TCP loopback beside PMPI's gRPC device (`--links network`)", "ompi-tcp", "pmpi-network"),
                          ("Open MPI shared memory beside PMPI's (`pmpi run -n 2`)", "ompi-sm", "pmpi-shm")):
    theirs, ours = load(ompi), load(pmpi)
    their_calls, our_calls = (load_calls(ompi), load_calls(pmpi)) if with_calls else ({}, {})
    print(f"### Per round trip, both ranks: {title}\n")
    header = ("| size | Open MPI context switches (voluntary + involuntary) | PMPI context switches (voluntary + involuntary)"
              " | PMPI bytes allocated | PMPI gen-0 GCs |")
    if with_calls:
        header += " Open MPI system calls | PMPI system calls |"
    print(header)
    print("|---:" * (7 if with_calls else 5) + "|")
    for size in sorted(set(theirs) & set(ours)):
        t, o = theirs[size], ours[size]
        row = f"| {label(size)} | {t[0]:.2f} + {t[1]:.2f} | {o[0]:.2f} + {o[1]:.2f} | {o[2]:.0f} | {o[3]:.4f} |"
        if with_calls:
            row += f" {calls_cell(their_calls[size])} | {calls_cell(our_calls[size])} |"
        print(row)
    print()
PY

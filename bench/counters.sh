#!/usr/bin/env bash
# What one ping-pong round trip costs each side besides time, PMPI beside Open MPI in one run: context switches
# (voluntary and involuntary, every thread of both rank processes, from /proc/self/task/*/status around the timed loop)
# and, for PMPI, bytes allocated and gen-0 collections. Four runs, each with --counters: Open MPI over TCP loopback
# beside PMPI's gRPC device (`pmpi run --links network -n 2`), and Open MPI shared memory beside PMPI's (`pmpi run -n 2`).
#
#   bench/counters.sh [--quick] [--timeout SECONDS]
#
# Prints a Markdown table per pair. Counts move far less with the machine's load than times do, so one run of each
# says where a message's cost goes; bench/run.sh measures the times. Needs mpicc, mpirun, python3 and the .NET SDK.
set -euo pipefail

quick_flag=
child_timeout=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick_flag=--quick ;;
    --timeout) child_timeout="${2:?--timeout needs seconds}"; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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

run() {
  local kind="$1"; shift
  echo "counters.sh: $kind" >&2
  # pmpi run puts each rank's lines behind "[rank] ".
  (cd "$work" && timeout "$child_timeout" "$@") | sed 's/^\[[0-9]*\] //' | grep '^# counters' >"$work/$kind" \
    || { echo "counters.sh: $kind failed." >&2; exit 1; }
}
run ompi-tcp "${ompi[@]}" -np 2 --mca btl tcp,self --mca btl_tcp_if_include lo ./pingpong --counters $quick_flag
run pmpi-network "${pmpi[@]}" --links network -n 2 "$bench_dll" -- pingpong --device grpc --jit-warmup --counters $quick_flag
run ompi-sm "${ompi[@]}" -np 2 ./pingpong --counters $quick_flag
run pmpi-shm "${pmpi[@]}" -n 2 "$bench_dll" -- pingpong --device grpc --jit-warmup --counters $quick_flag

python3 - "$work" <<'PY'
import sys
from collections import defaultdict

def load(kind):
    """size -> [voluntary, involuntary, allocated, gen0] summed over ranks 0 and 1 (None where not measured)."""
    totals = defaultdict(lambda: [0.0, 0.0, None, None])
    for line in open(f"{sys.argv[1]}/{kind}", encoding="utf-8"):
        _, _, _, size, *values = line.split()
        row = totals[int(size)]
        for i, value in enumerate(values):
            if value != "-":
                row[i] = (row[i] or 0.0) + float(value)
    return totals

def label(size):
    return f"{size >> 20} MB" if size >= 1 << 20 else f"{size >> 10} KB" if size >= 1 << 10 else f"{size} B"

for title, ompi, pmpi in (("Open MPI over TCP loopback beside PMPI's gRPC device (`--links network`)", "ompi-tcp", "pmpi-network"),
                          ("Open MPI shared memory beside PMPI's (`pmpi run -n 2`)", "ompi-sm", "pmpi-shm")):
    theirs, ours = load(ompi), load(pmpi)
    print(f"### Per round trip, both ranks: {title}\n")
    print("| size | Open MPI context switches (voluntary + involuntary) | PMPI context switches (voluntary + involuntary) | PMPI bytes allocated | PMPI gen-0 GCs |")
    print("|---:|---:|---:|---:|---:|")
    for size in sorted(set(theirs) & set(ours)):
        t, o = theirs[size], ours[size]
        print(f"| {label(size)} | {t[0]:.2f} + {t[1]:.2f} | {o[0]:.2f} + {o[1]:.2f} | {o[2]:.0f} | {o[3]:.4f} |")
    print()
PY

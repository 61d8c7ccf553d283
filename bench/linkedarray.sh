#!/usr/bin/env bash
# Motor's LinkedArray ping-pong (a linked list of N nodes each holding an int array, 4096 ints in 256 and in 4096
# nodes, bounced between two ranks as one object message) on PMPI beside mpi4py's pickle-based send/recv, in one run
# on one machine. Runs are interleaved (PMPI rank processes linked by shared memory, the same over gRPC with
# --links network, PMPI in-process, mpi4py, then again), so a change in the machine's load hits all four alike.
# Prints each run's half round trips, then a Markdown table of the median and the spread (min–max) per
# implementation and list, with the load average before and after.
#
#   bench/linkedarray.sh [--pairs N] [--iterations N] [--timeout SECONDS]
#
# Needs the .NET SDK and Debian's python3-mpi4py and openmpi-bin (apt-get install -y python3-mpi4py openmpi-bin).
# Installs nothing.
set -euo pipefail

pairs=5
iterations=300
child_timeout=600
while [[ $# -gt 0 ]]; do
  case "$1" in
    --pairs) pairs="${2:?--pairs needs a number}"; shift ;;
    --iterations) iterations="${2:?--iterations needs a number}"; shift ;;
    --timeout) child_timeout="${2:?--timeout needs seconds}"; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "linkedarray.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python=/usr/bin/python3   # Debian's, which python3-mpi4py installs into
for tool in mpirun dotnet timeout awk; do
  command -v "$tool" >/dev/null || { echo "linkedarray.sh: $tool not found (apt-get install -y openmpi-bin; the .NET SDK)." >&2; exit 1; }
done
timeout 30 "$python" -c 'import mpi4py' 2>/dev/null \
  || { echo "linkedarray.sh: $python cannot import mpi4py (apt-get install -y python3-mpi4py)." >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

echo "linkedarray.sh: building bench/Pmpi.Bench and the pmpi CLI (Release)" >&2
for project in bench/Pmpi.Bench src/Pmpi.Cli; do
  timeout 600 dotnet build "$repo/$project" -c Release -v quiet -nologo >"$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; echo "linkedarray.sh: building $project failed." >&2; exit 1; }
done
bench_dll="$repo/bench/Pmpi.Bench/bin/Release/net10.0/Pmpi.Bench.dll"
pmpi_dll="$repo/src/Pmpi.Cli/bin/Release/net10.0/pmpi.dll"

# run NAME COMMAND...: one run's "nodes<TAB>half_rtt_us" lines into $work/NAME.<i>; a failure leaves it empty.
run() {
  local name="$1" out="$work/$1.$i" rc=0; shift
  (cd "$work" && timeout "$child_timeout" "$@") >"$out" 2>"$out.err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "linkedarray.sh: $name run $i failed (exit $rc):" >&2
    tail -5 "$out.err" >&2
    : >"$out"
  fi
  echo "linkedarray.sh: [$i/$pairs] $name: $(sed 's/^\[0\] //' "$out" | grep -v '^#' | tr '\t\n' '= ')" >&2
}
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for ((i = 1; i <= pairs; i++)); do
  run shm dotnet "$pmpi_dll" run -n 2 "$bench_dll" linkedarray --device grpc --iterations "$iterations" --timeout "$child_timeout"
  run network dotnet "$pmpi_dll" run --links network -n 2 "$bench_dll" linkedarray --device grpc --iterations "$iterations" --timeout "$child_timeout"
  run inprocess dotnet "$bench_dll" linkedarray --iterations "$iterations" --timeout "$child_timeout"
  run mpi4py mpirun --allow-run-as-root --oversubscribe -np 2 "$python" "$repo/bench/linkedarray.py" "$iterations"
done
load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
cpu="$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
echo "Machine: $(nproc) cores, ${cpu:-unknown CPU}, $(date -u '+%Y-%m-%d %H:%M UTC'), .NET SDK $(timeout 60 dotnet --version), mpi4py $("$python" -c 'import mpi4py; print(mpi4py.__version__)'), $(timeout 30 mpirun --version 2>&1 | head -1); load average (1, 5, 15 min) $load_before before and $load_after after; $pairs interleaved runs of $iterations timed round trips each."
echo
awk '
  FNR == 1 { split(FILENAME, parts, "/"); name = parts[length(parts)]; sub(/\.[0-9]+$/, "", name) }
  { sub(/^\[0\] /, "") }
  /^[0-9]+\t/ { key = name SUBSEP $1; n[key]++; v[key, n[key]] = $2 + 0; nodes[$1] = 1 }
  function median(key,    k, i, j, t, a) {
    k = n[key]; for (i = 1; i <= k; i++) a[i] = v[key, i]
    for (i = 2; i <= k; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    lo = a[1]; hi = a[k]
    return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
  }
  function cell(impl, count,    key, m) {
    key = impl SUBSEP count
    if (!(key in n)) return " – | – "
    m = median(key); med[impl] = m
    return sprintf(" %.0f | %.0f–%.0f ", m, lo, hi)
  }
  END {
    print "| list | PMPI shared memory µs (median) | spread | PMPI gRPC µs | spread | PMPI in-process µs | spread | mpi4py µs | spread | mpi4py / PMPI shared memory | mpi4py / PMPI gRPC | mpi4py / PMPI in-process |"
    print "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (count in nodes) {
      delete med
      row = "| " count " nodes × " 4096 / count " ints |" cell("shm", count) "|" cell("network", count) "|" cell("inprocess", count) "|" cell("mpi4py", count) "|"
      split("shm network inprocess", impls, " ")
      for (k = 1; k <= 3; k++)
        row = row ((impls[k] in med) && ("mpi4py" in med) ? sprintf(" %.1f× |", med["mpi4py"] / med[impls[k]]) : " – |")
      print row
    }
  }' "$work"/shm.* "$work"/network.* "$work"/inprocess.* "$work"/mpi4py.*

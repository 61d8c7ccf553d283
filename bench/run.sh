#!/usr/bin/env bash
# PMPI beside native Open MPI, in one run on one machine: shared/refbench/pingpong.c over Open MPI shared memory and
# over TCP loopback, and bench/Pmpi.Bench's identical ping-pong on PMPI's in-process device (ranks as threads) and on
# its gRPC device (two rank processes over loopback HTTP/2, launched by `pmpi run -n 2`). Prints Markdown tables;
# with --write also puts them into docs/benchmarks.md between the bench markers.
#
#   bench/run.sh [--write] [--runs N] [--timeout SECONDS]
#
# --runs N (default 3) runs each of the six (Open MPI sm and TCP, PMPI in-process and gRPC, each plain and JIT-warmed)
# N times, interleaved, and keeps each size's best half round trip: on a shared machine the best of a few runs is the
# least disturbed one. Every child process runs under `timeout`.
# Installs nothing: it needs mpicc/mpirun (Debian: apt-get install -y openmpi-bin libopenmpi-dev) and the .NET SDK.
set -euo pipefail

write=0
runs=3
child_timeout=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --write) write=1 ;;
    --runs) runs="${2:?--runs needs a number}"; shift ;;
    --timeout) child_timeout="${2:?--timeout needs seconds}"; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The repository is cloned with shared/ beside it.
refbench="${PMPI_REFBENCH:-$repo/../shared/refbench/pingpong.c}"
doc="$repo/docs/benchmarks.md"

missing=()
for tool in mpicc mpirun; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [[ ${#missing[@]} -gt 0 ]]; then
  echo "run.sh: ${missing[*]} not found. Install Open MPI first:" >&2
  echo "  apt-get install -y openmpi-bin libopenmpi-dev" >&2
  exit 1
fi
for tool in dotnet timeout awk; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool not found on PATH." >&2; exit 1; }
done
[[ -f "$refbench" ]] || { echo "run.sh: $refbench not found (set PMPI_REFBENCH to pingpong.c)." >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

echo "run.sh: building pingpong.c, bench/Pmpi.Bench and the pmpi CLI (Release)" >&2
timeout 120 mpicc -O2 -o "$work/pingpong" "$refbench"
for project in bench/Pmpi.Bench src/Pmpi.Cli; do
  timeout 600 dotnet build "$repo/$project" -c Release -v quiet -nologo >"$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; echo "run.sh: building $project failed." >&2; exit 1; }
done
bench_dll="$repo/bench/Pmpi.Bench/bin/Release/net10.0/Pmpi.Bench.dll"
pmpi_dll="$repo/src/Pmpi.Cli/bin/Release/net10.0/pmpi.dll"

# run NAME COMMAND...: one run into $work/NAME.<i>; a failure or timeout leaves that run out of the table.
run() {
  local name="$1" out="$work/$1.$i" rc=0; shift
  echo "run.sh: [$i/$runs] $name" >&2
  (cd "$work" && timeout "$child_timeout" "$@") >"$out" 2>"$out.err" || rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "run.sh: $name run $i failed (exit $rc$([[ $rc -eq 124 ]] && echo ", timed out after ${child_timeout}s")):" >&2
    tail -5 "$out.err" >&2
    : >"$out"
  fi
}
# The machine may be shared: the load average around the runs says how much to trust them.
load_before="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
for ((i = 1; i <= runs; i++)); do
  run sm mpirun --allow-run-as-root --oversubscribe -np 2 ./pingpong
  run tcp mpirun --allow-run-as-root -np 2 --mca btl tcp,self --mca btl_tcp_if_include lo ./pingpong
  run pmpi dotnet run -c Release --project "$repo/bench/Pmpi.Bench" -- pingpong --timeout "$child_timeout"
  # The same after one untimed sweep: pingpong.c's short warm-up ends while .NET still runs tier-0 code.
  run pmpiwarm dotnet run -c Release --project "$repo/bench/Pmpi.Bench" -- pingpong --jit-warmup --timeout "$child_timeout"
  # Two rank processes on an embedded agent and master; rank 0's lines come back tagged "[0] ".
  run grpc dotnet "$pmpi_dll" run -n 2 "$bench_dll" pingpong --device grpc --timeout "$child_timeout"
  run grpcwarm dotnet "$pmpi_dll" run -n 2 "$bench_dll" pingpong --device grpc --jit-warmup --timeout "$child_timeout"
done

cpu="$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
load_after="$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)"
machine="$(timeout 10 nproc) cores, ${cpu:-unknown CPU}, $(date -u '+%Y-%m-%d %H:%M UTC'), .NET SDK $(timeout 60 dotnet --version), $(timeout 30 mpirun --version 2>&1 | head -1), load average (1, 5, 15 min) $load_before before and $load_after after"

# One row per size: best (lowest) half round trip of each implementation over the runs; bandwidth follows from it.
table="$(awk -v runs="$runs" -v machine="$machine" '
  function label(n) { return n >= 1048576 ? n / 1048576 " MB" : (n >= 1024 ? n / 1024 " KB" : n " B") }
  FNR == 1 { split(FILENAME, parts, "/"); name = parts[length(parts)]; sub(/\.[0-9]+$/, "", name) }
  { sub(/^\[0\] /, "") }
  /^[0-9]+\t/ {
    n = $1 + 0; t = $2 + 0
    if (!(n in seen)) { seen[n] = 1; order[++count] = n }
    if (!((name, n) in best) || t < best[name, n]) best[name, n] = t
  }
  END {
    print "Machine: " machine ". Best of " runs " interleaved runs per size."
    print ""
    print "| size | Open MPI sm µs | Open MPI sm MB/s | Open MPI TCP µs | Open MPI TCP MB/s | PMPI in-process µs | PMPI in-process MB/s | latency PMPI/OMPI sm | bandwidth PMPI/OMPI sm |"
    print "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (k = 1; k <= count; k++) {
      n = order[k]; row = "| " label(n)
      for (j = 1; j <= 3; j++) {
        impl = j == 1 ? "sm" : (j == 2 ? "tcp" : "pmpi")
        if ((impl, n) in best) { t = best[impl, n]; row = row " | " sprintf("%.2f", t) " | " sprintf("%.0f", n / t) }
        else row = row " | – | –"
      }
      print row ratios("pmpi", n) " |"
    }
    print ""
    print "PMPI after one untimed sweep (`pingpong --jit-warmup`: the timed sweep runs tiered-up code):"
    print ""
    print "| size | PMPI in-process µs | PMPI in-process MB/s | latency PMPI/OMPI sm | bandwidth PMPI/OMPI sm |"
    print "|---:|---:|---:|---:|---:|"
    for (k = 1; k <= count; k++) {
      n = order[k]
      row = "| " label(n) (("pmpiwarm", n) in best ? " | " sprintf("%.2f", best["pmpiwarm", n]) " | " sprintf("%.0f", n / best["pmpiwarm", n]) : " | – | –")
      print row ratios("pmpiwarm", n) " |"
    }
    print ""
    print "PMPI gRPC device, two rank processes over loopback HTTP/2, against Open MPI over TCP loopback:"
    print ""
    print "| size | Open MPI TCP µs | Open MPI TCP MB/s | PMPI gRPC µs | PMPI gRPC MB/s | latency gRPC/OMPI TCP | bandwidth gRPC/OMPI TCP |"
    print "|---:|---:|---:|---:|---:|---:|---:|"
    for (k = 1; k <= count; k++) {
      n = order[k]; row = "| " label(n)
      for (j = 1; j <= 2; j++) {
        impl = j == 1 ? "tcp" : "grpc"
        if ((impl, n) in best) { t = best[impl, n]; row = row " | " sprintf("%.2f", t) " | " sprintf("%.0f", n / t) }
        else row = row " | – | –"
      }
      print row ratios("grpc", n, "tcp") " |"
    }
    print ""
    print "PMPI gRPC after one untimed sweep (`pingpong --device grpc --jit-warmup`), against Open MPI over TCP loopback:"
    print ""
    print "| size | PMPI gRPC µs | PMPI gRPC MB/s | latency gRPC/OMPI TCP | bandwidth gRPC/OMPI TCP |"
    print "|---:|---:|---:|---:|---:|"
    for (k = 1; k <= count; k++) {
      n = order[k]
      row = "| " label(n) (("grpcwarm", n) in best ? " | " sprintf("%.2f", best["grpcwarm", n]) " | " sprintf("%.0f", n / best["grpcwarm", n]) : " | – | –")
      print row ratios("grpcwarm", n, "tcp") " |"
    }
  }
  # " | latency ratio | bandwidth ratio" of impl against reference (Open MPI shared memory unless given) for size n.
  function ratios(impl, n, reference,    ref, pm) {
    if (reference == "") reference = "sm"
    if (!((reference, n) in best) || !((impl, n) in best)) return " | – | –"
    ref = best[reference, n]; pm = best[impl, n]
    return " | " sprintf("%.2f×", pm / ref) " | " sprintf("%.2f×", ref / pm)
  }' "$work"/sm.* "$work"/tcp.* "$work"/pmpi.* "$work"/pmpiwarm.* "$work"/grpc.* "$work"/grpcwarm.*)"

echo "$table"

if [[ $write -eq 1 ]]; then
  begin='<!-- bench:begin (written by bench/run.sh --write) -->'
  end='<!-- bench:end -->'
  grep -qF "$begin" "$doc" && grep -qF "$end" "$doc" \
    || { echo "run.sh: $doc lacks the markers '$begin' and '$end'." >&2; exit 1; }
  printf '%s\n' "$table" >"$work/table.md"
  awk -v begin="$begin" -v end="$end" -v table="$work/table.md" '
    $0 == begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
    $0 == end { skipping = 0 }
    !skipping { print }' "$doc" >"$work/benchmarks.md"
  cp "$work/benchmarks.md" "$doc"
  echo "run.sh: wrote the table into ${doc#"$repo"/}" >&2
fi

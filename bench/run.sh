#!/usr/bin/env bash
# PMPI beside native Open MPI, in one run on one machine, from a clone of this repository alone. The native
# programs are bench/native/*.c; bench/Pmpi.Bench mirrors each statement for statement.
#
#   bench/run.sh [--quick] [--rounds N] [--write] [--keep DIR] [--timeout SECONDS]
#
# Each round runs every comparison as a back-to-back pair, in an order that reverses from one round to the next; the
# ping-pong and collective pairs run a few sizes at a time (`--sizes`: the small ones together, each from 64 KB on its
# own; --quick: small and large), so a pair's two runs are seconds apart rather than a whole sweep: this VM's speed
# shifts within seconds (Open MPI's own 1 MB ping-pong took 134 µs in one run and 417 µs in the next, ten seconds on).
#   ping-pong  PMPI in-process, Open MPI shared memory, PMPI two processes (`pmpi run -n 2`: shared memory), the same
#              over gRPC (`--links network`), Open MPI TCP loopback: each PMPI path next to the Open MPI path it is
#              compared with
#   TLS        (as root, with iproute2) the same two processes with their ranks on an address beyond loopback, so
#              their streams speak TLS, beside the h2c run and beside OpenSSL's own TLS between two processes on the
#              same address (bench/native/tls_pingpong.py, from 64 KB: the crypto floor the TLS goal is judged by), all
#              inside a network namespace this script makes; and for scale, OpenSSL's TLS beside plain TCP loopback,
#              and .NET's, SslStream beside plain sockets at every size (`Pmpi.Bench tlsfloor`)
#   collectives  Allreduce and Bcast by size, 4 ranks: `mpirun -np 4` beside `pmpi run -n 4`, three pairs a round;
#              beside them in the same pairs, the allreduce through the F# and the Visual Basic face
#              (bench/Pmpi.Bench.FSharp, bench/Pmpi.Bench.VisualBasic: `Pmpi.Bench faces`)
#   first messages  a user's first ping-pong, 1 B from the first message after init without warm-up, timed in
#              windows (round trip 1, 2–10, ... 10,001–100,000), once a round: bench/native/firstmessages.c beside
#              bench/Pmpi.Bench.FirstMessages as built (IL, what `dotnet build` gives) and published Native AOT
#   overlap    how much of a nonblocking allreduce hides behind computation, 2 ranks, once a round (osu_iallreduce's
#              method: bench/native/overlap.c beside `Pmpi.Bench overlap`)
#   launch     wall time of `mpirun -np N ./hello` beside `pmpi run -n N ... hello`, N = 1 2 4 8 16, and the ranks'
#              resident memory after init; the hello published twice: ReadyToRun, as a rank usually ships
#              (bench/Pmpi.Bench.Hello.ReadyToRun: framework-dependent, run by the dotnet host), and Native AOT,
#              compiled ahead of time as the C hello is (bench/Pmpi.Bench.Hello)
# PMPI's CLI runs everywhere as deployed (its linux-x64 publish: Native AOT).
# Throughout, bench/native/placement.c samples how far apart the host has put this machine's cores: on a VM it moves
# them, for tenths of a second to tens of seconds, onto cores that share no cache, and every same-node transfer
# slows two- to fourfold meanwhile, Open MPI's and PMPI's alike. A run waits for them to be near (a minute at most),
# and one during which they were apart runs again (up to twice; --quick does neither, and only reports them), so that
# a pair compares two runs on the same placement; the report says how many ran again.
# bench/report.py turns the rounds into tables: the median ratio of the pairs with its min–max, the goal beside it,
# and a line for every figure that did not reproduce. PMPI's ping-pong and collectives first repeat their sweep untimed
# until the JIT has settled (--jit-warmup), so both sides time steady-state code; the same-node ping-pong and the
# collectives also run without it, as a user's own program runs (the "cold" rows). --rounds N (default 5; --quick: 2)
# rounds; --quick also runs a tenth of the iterations, N = 1 4 16 and no TLS floors (OpenSSL's, .NET's), and
# finishes in minutes once built. --write puts the tables into
# docs/benchmarks.md between the bench markers and writes the plots beside it. --keep DIR keeps the raw runs in DIR
# (a new directory), even when the run fails, so `python3 bench/report.py DIR` can redraw the tables later. Every
# child runs under `timeout`.
# Needs mpicc and mpirun (Debian: apt-get install -y openmpi-bin libopenmpi-dev), gnuplot for --write
# (apt-get install -y gnuplot-nox), python3 and the .NET SDK; installs nothing.
set -euo pipefail

write=0
quick=0
rounds=
keep=
child_timeout=300
while [[ $# -gt 0 ]]; do
  case "$1" in
    --write) write=1 ;;
    --quick) quick=1 ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift ;;
    --keep) keep="${2:?--keep needs a directory}"; shift ;;
    --timeout) child_timeout="${2:?--timeout needs seconds}"; shift ;;
    -h|--help) sed -n '2,44p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
[[ -z "$keep" || ! -e "$keep" ]] || { echo "run.sh: --keep $keep exists already; name a new directory." >&2; exit 2; }
rounds="${rounds:-$([[ $quick -eq 1 ]] && echo 2 || echo 5)}"
quick_flag=$([[ $quick -eq 1 ]] && echo --quick || true)
attempts=$([[ $quick -eq 1 ]] && echo 1 || echo 3)
launch_counts=$([[ $quick -eq 1 ]] && echo "1 4 16" || echo "1 2 4 8 16")
# The sizes each ping-pong and collective pair runs together (--quick: fewer runs, each further apart).
if [[ $quick -eq 1 ]]; then
  pingpong_groups=("1 8 64 1024 8192 65536" "1048576 4194304 16777216")
  collective_groups=("8 64 1024 8192 65536" 1048576)
else
  pingpong_groups=("1 8 64 1024 8192" 65536 1048576 4194304 16777216)
  collective_groups=("8 64 1024 8192" 65536 1048576)
fi
# The collective pairs run three times a round (--quick: once). A collective run lasts seconds, and where the host had
# the cores in it moves either side by up to twofold (Open MPI's own Allreduce of 1 MB: 428–1,050 µs in nine runs back
# to back), so five pairs left the median ratio of a run to chance (1.06× to 1.58× in the last seven runs).
collective_pairs=$([[ $quick -eq 1 ]] && echo 1 || echo 3)

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
doc="$repo/docs/benchmarks.md"

needs=(mpicc mpirun dotnet python3 timeout)
[[ $write -eq 1 ]] && needs+=(gnuplot)
for tool in "${needs[@]}"; do
  if ! command -v "$tool" >/dev/null; then
    case "$tool" in
      mpicc|mpirun) echo "run.sh: $tool not found. Install Open MPI first: apt-get install -y openmpi-bin libopenmpi-dev" >&2 ;;
      gnuplot) echo "run.sh: gnuplot not found; --write draws the plots with it: apt-get install -y gnuplot-nox" >&2 ;;
      *) echo "run.sh: $tool not found on PATH." >&2 ;;
    esac
    exit 1
  fi
done

work="$(mktemp -d)"
namespace="pmpi-bench-$$"
agent_pid=
placement_pid=
cleanup() {
  local pid
  for pid in $agent_pid $placement_pid; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; done
  ip netns list 2>/dev/null | grep -q "^$namespace" && ip netns del "$namespace"
  [[ -n "$keep" ]] && cp -r "$runs" "$keep" && echo "run.sh: the raw runs are in $keep" >&2
  rm -rf "$work"
}
trap cleanup EXIT
runs="$work/runs"
mkdir -p "$runs"
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

echo "run.sh: building bench/native/*.c, bench/Pmpi.Bench and the pmpi CLI (Release)" >&2
for program in pingpong collectives overlap hello firstmessages placement; do
  timeout 120 mpicc -O2 -pthread -o "$work/$program" "$repo/bench/native/$program.c"
done
for project in Pmpi.Bench Pmpi.Bench.FirstMessages; do
  timeout 600 dotnet build "$repo/bench/$project" -c Release -v quiet -nologo >"$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; echo "run.sh: building bench/$project failed." >&2; exit 1; }
done
# PMPI runs as it is deployed (deploy/README.md: the CLI's linux-x64 publish is a Native AOT executable); the launch
# rows run the hello in the two forms the README gives for rank programs, ReadyToRun and Native AOT: compiled ahead of
# time, as mpicc compiles the C hello. The other rows time steady-state code either way.
publish() {
  local project="$1" output="$2"; shift 2
  timeout 900 dotnet publish "$repo/$project" -c Release -r linux-x64 "$@" \
    -o "$work/published/$output" -v quiet -nologo >"$work/build.log" 2>&1 \
    || { cat "$work/build.log" >&2; echo "run.sh: publishing $project failed." >&2; exit 1; }
}
publish bench/Pmpi.Bench.Hello.ReadyToRun hello-r2r
publish bench/Pmpi.Bench.Hello hello-aot
publish bench/Pmpi.Bench.FirstMessages firstmessages-aot
publish src/Pmpi.Cli cli
bench_dll="$repo/bench/Pmpi.Bench/bin/Release/net10.0/Pmpi.Bench.dll"
pmpi_cli="$work/published/cli/pmpi"
ompi=(mpirun --allow-run-as-root --oversubscribe)
# Both sides may run more ranks than cores, as mpirun --oversubscribe does.
pmpi=("$pmpi_cli" run --oversubscribe)

# run KIND COMMAND...: one run into $runs/KIND.$round (KIND.$round.$sizes' first, for a run of some of the sizes;
# .pair$pair after it for a round's second pair of a comparison and on),
# with its wall time as a "# wall" line; a failure or timeout leaves the run empty (out of the tables) and says why.
# A run starts once the host has had this machine's cores near for a second (`await_near`, a minute at most); one
# during which it had them apart (`apart`) runs again, up to twice; --quick does neither. Each run with them apart is
# a line in $runs/apart, and the report counts them.
sizes=
pair=1
run() {
  local kind="$1" first_size="${sizes%% *}" rc attempt start end far outcome
  local round_name="$round$( ((pair > 1)) && echo ".$pair")"
  local out="$runs/$kind.$round${first_size:+.$first_size}$( ((pair > 1)) && echo ".pair$pair")"; shift
  for ((attempt = 1; ; attempt++)); do
    (( attempts > 1 )) && await_near
    echo "run.sh: [round $round/$rounds] $kind${sizes:+ (sizes $sizes)}" >&2
    rc=0
    start=$(date +%s.%N)
    (cd "$work" && timeout "$child_timeout" "$@") >"$out" 2>"$work/stderr" || rc=$?
    end=$(date +%s.%N)
    if [[ $rc -ne 0 ]]; then
      echo "run.sh: $kind in round $round failed (exit $rc$([[ $rc -eq 124 ]] && echo ", timed out after ${child_timeout}s")):" >&2
      tail -5 "$work/stderr" >&2
      : >"$out"
      return
    fi
    echo "# wall $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }')" >>"$out"
    far="$(apart "$start" "$end")"
    [[ -z "$far" ]] && return
    outcome=kept
    (( attempt < attempts )) && outcome=again
    echo "$kind $round_name ${first_size:--} $far $outcome" >>"$runs/apart"
    echo "run.sh: the host had the cores apart during it ($far samples); $([[ $outcome == again ]] && echo "running it again" || echo "kept as it ran")" >&2
    [[ $outcome == again ]] || return 0
  done
}

# The host's placement of the cores (bench/native/placement.c), sampled throughout into $runs/placement: a sample is
# apart when a cache line's round trip between two cores takes over 2.5 times the fastest tenth of the samples so
# far. apart START END prints "apart/known" for the samples in that window when three or more are apart, else nothing.
apart() {
  [[ -n "$placement_pid" ]] || return 0
  awk '$3 != "-" { print $3 }' "$runs/placement" | sort -n | awk -v s="$1" -v e="$2" -v samples="$runs/placement" '
    { fastest[NR] = $1 }
    END {
      if (NR == 0) exit
      bound = 2.5 * fastest[int((NR - 1) / 10) + 1]
      while ((getline line < samples) > 0) {
        split(line, f, "\t")
        if (f[1] < s || f[1] > e || f[3] == "-") continue
        known++
        if (f[3] + 0 > bound) far++
      }
      if (far >= 3) printf "%d/%d\n", far, known
    }'
}

# await_near: returns once the last second's samples found the cores near, or after a minute of waiting for it.
await_near() {
  local tries now
  for ((tries = 0; tries < 120; tries++)); do
    now=$(date +%s.%N)
    [[ -z "$(apart "$(awk -v now="$now" 'BEGIN { printf "%.3f", now - 1 }')" "$now")" ]] && return
    (( tries == 0 )) && echo "run.sh: the host has the cores apart; waiting for them to come near" >&2
    sleep 0.5
  done
}

# chain RUN...: the runs in this order in odd rounds and in reverse in even ones (and, for a round's further pairs,
# turned each time), so neighbours run back to back and neither side of a pair always goes first.
chain() {
  local runs_in_order=("$@") i
  if (( (round + pair) % 2 == 1 )); then for ((i = $# - 1; i >= 0; i--)); do "${runs_in_order[i]}"; done
  else for i in "${runs_in_order[@]}"; do "$i"; done; fi
}
sm() { run pingpong-sm "${ompi[@]}" -np 2 ./pingpong $quick_flag --sizes $sizes; }
tcp() { run pingpong-tcp "${ompi[@]}" -np 2 --mca btl tcp,self --mca btl_tcp_if_include lo ./pingpong $quick_flag --sizes $sizes; }
inproc() { run pingpong-inproc dotnet "$bench_dll" pingpong --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"; }
procs() { run pingpong-procs "${pmpi[@]}" -n 2 "$bench_dll" -- pingpong --device grpc --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"; }
# What a user's own program gets: the same run without --jit-warmup, timed after the untimed tenth both sides run.
procs_cold() { run pingpong-procs-cold "${pmpi[@]}" -n 2 "$bench_dll" -- pingpong --device grpc $quick_flag --sizes $sizes --timeout "$child_timeout"; }
network() { run pingpong-network "${pmpi[@]}" --links network -n 2 "$bench_dll" -- pingpong --device grpc --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"; }
# The TLS rows: a namespace holding a veth pair (its address is beyond loopback, so ranks there speak TLS with
# pinned certificates), an agent with a throwaway cluster credential, and the same ping-pong through it and, for the
# h2c side of the pair, through the embedded default in the same namespace.
tls_address=10.254.0.1
tls_setup() {
  if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null; then
    echo "run.sh: the TLS rows need root and iproute2 (they run in a network namespace); skipped." >&2
    return 1
  fi
  ip netns add "$namespace"
  ip -n "$namespace" link set lo up
  ip -n "$namespace" link add pmpi0 type veth peer name pmpi1
  ip -n "$namespace" addr add "$tls_address/24" dev pmpi0
  ip -n "$namespace" link set pmpi0 up
  ip -n "$namespace" link set pmpi1 up
  "$pmpi_cli" cluster init --dir "$work/cluster" --name "$tls_address" >/dev/null
  ip netns exec "$namespace" "$pmpi_cli" agent --bind "$tls_address" --port 7399 --credentials "$work/cluster" \
    --rank-address "$tls_address" >"$work/agent.log" 2>&1 &
  agent_pid=$!
  for _ in $(seq 60); do grep -q "listening on" "$work/agent.log" && return 0; sleep 0.5; done
  echo "run.sh: the TLS agent did not start:" >&2; cat "$work/agent.log" >&2
  return 1
}
in_namespace=(ip netns exec "$namespace" "$pmpi_cli" run)
h2c() { run pingpong-h2c "${in_namespace[@]}" --links network -n 2 "$bench_dll" -- pingpong --device grpc --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"; }
tls() {
  run pingpong-tls "${in_namespace[@]}" --master "$tls_address:7399" --credentials "$work/cluster" --links network -n 2 "$bench_dll" -- \
    pingpong --device grpc --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"
}
# The floor PMPI's TLS is judged by: OpenSSL's own TLS between two processes on the same hops (the namespace's
# address), the same sizes from 64 KB, back to back with the TLS run.
tls_floor() {
  [[ " $sizes " =~ \ (65536|1048576|4194304|16777216)\  ]] || return 0
  run pingpong-tls-floor ip netns exec "$namespace" python3 "$repo/bench/native/tls_pingpong.py" tls --address "$tls_address" $quick_flag --sizes $sizes
}
tcp_native() { run pingpong-tcp-native python3 "$repo/bench/native/tls_pingpong.py" tcp $quick_flag; }
tls_native() { run pingpong-tls-native python3 "$repo/bench/native/tls_pingpong.py" tls $quick_flag; }
tcp_dotnet() { run pingpong-tcp-dotnet dotnet "$bench_dll" tlsfloor tcp $quick_flag; }
tls_dotnet() { run pingpong-tls-dotnet dotnet "$bench_dll" tlsfloor tls $quick_flag; }
coll_ompi() { run collectives-ompi "${ompi[@]}" -np 4 ./collectives $quick_flag --sizes $sizes; }
coll_pmpi() { run collectives-pmpi "${pmpi[@]}" -n 4 "$bench_dll" -- collectives --device grpc --ranks 4 --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"; }
coll_pmpi_cold() { run collectives-pmpi-cold "${pmpi[@]}" -n 4 "$bench_dll" -- collectives --device grpc --ranks 4 $quick_flag --sizes $sizes --timeout "$child_timeout"; }
coll_fsharp() { run faces-fsharp "${pmpi[@]}" -n 4 "$bench_dll" -- faces --face fsharp --device grpc --ranks 4 --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"; }
coll_vb() { run faces-vb "${pmpi[@]}" -n 4 "$bench_dll" -- faces --face vb --device grpc --ranks 4 --jit-warmup $quick_flag --sizes $sizes --timeout "$child_timeout"; }
# A user's first ping-pong, from its first message: as `dotnet build` leaves it (IL), and published Native AOT.
first_ompi() { run firstmessages-ompi "${ompi[@]}" -np 2 ./firstmessages $quick_flag; }
first_pmpi() { run firstmessages-pmpi "${pmpi[@]}" -n 2 "$repo/bench/Pmpi.Bench.FirstMessages/bin/Release/net10.0/Pmpi.Bench.FirstMessages.dll" $quick_flag; }
first_pmpi_aot() { run firstmessages-pmpiaot "${pmpi[@]}" -n 2 "$work/published/firstmessages-aot/Pmpi.Bench.FirstMessages" $quick_flag; }
overlap_ompi() { run overlap-ompi "${ompi[@]}" -np 2 ./overlap $quick_flag; }
overlap_pmpi() { run overlap-pmpi "${pmpi[@]}" -n 2 "$bench_dll" -- overlap --device grpc --ranks 2 --jit-warmup $quick_flag --timeout "$child_timeout"; }

# CPU time (ms) used so far by the kernel's memory-reclaim threads (kdamond: DAMON; kswapd). On some VMs they take a
# core for tenths of a second at a time, which no pairing undoes, so the report gives what they took in each round.
reclaim_ms() {
  awk -v tick="$(getconf CLK_TCK)" '{ line = $0; sub(/^[0-9]+ \(/, "", line); comm = substr(line, 1, index(line, ")") - 1);
    if (comm ~ /^(kdamond|kswapd)/) { sub(/^[^)]*\) /, "", line); split(line, f, " "); ms += (f[12] + f[13]) * 1000 / tick } }
    END { printf "%d\n", ms }' /proc/[0-9]*/stat 2>/dev/null
}
: >"$runs/load"
: >"$runs/reclaim"
: >"$runs/apart"
if [[ $(nproc) -gt 1 ]]; then
  "$work/placement" >"$runs/placement" &
  placement_pid=$!
fi
with_tls=0
tls_setup && with_tls=1
for ((round = 1; round <= rounds; round++)); do
  cut -d' ' -f1-3 /proc/loadavg >>"$runs/load"
  reclaim_ms >>"$runs/reclaim"
  for sizes in "${pingpong_groups[@]}"; do
    chain inproc sm procs procs_cold network tcp
    [[ $with_tls -eq 1 ]] && chain h2c tls tls_floor
  done
  for ((pair = 1; pair <= collective_pairs; pair++)); do
    for sizes in "${collective_groups[@]}"; do chain coll_fsharp coll_ompi coll_pmpi coll_pmpi_cold coll_vb; done
  done
  pair=1
  sizes=
  chain overlap_ompi overlap_pmpi
  chain first_pmpi_aot first_ompi first_pmpi
  # The TLS floors are for scale, with no goal of their own: --quick leaves them out.
  if [[ $quick -eq 0 ]]; then
    chain tcp_native tls_native
    chain tcp_dotnet tls_dotnet
  fi
  for n in $launch_counts; do
    hello_ompi() { run "launch-ompi-$n" "${ompi[@]}" -np "$n" ./hello; }
    hello_pmpi() { run "launch-pmpi-$n" "${pmpi[@]}" -n "$n" "$work/published/hello-r2r/Pmpi.Bench.Hello.dll"; }
    hello_pmpi_aot() { run "launch-pmpiaot-$n" "${pmpi[@]}" -n "$n" "$work/published/hello-aot/Pmpi.Bench.Hello"; }
    chain hello_pmpi_aot hello_ompi hello_pmpi
  done
done

reclaim_ms >>"$runs/reclaim"

cpu="$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)"
echo "$(nproc) cores, ${cpu:-unknown CPU}, $(date -u '+%Y-%m-%d %H:%M UTC'), .NET SDK $(timeout 60 dotnet --version), $(timeout 30 mpirun --version 2>&1 | head -1)" >"$runs/machine"

plots=()
[[ $write -eq 1 ]] && plots=(--plots "$repo/docs")
table="$(python3 "$repo/bench/report.py" "$runs" "${plots[@]}")"
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
  echo "run.sh: wrote the tables into ${doc#"$repo"/} and the plots beside it" >&2
fi

#!/usr/bin/env bash
# Broadcast between nodes: the binomial tree beside broadcast by blocks (scatter + ring), to measure from which size
# blocks pay (CollectiveOptions.BlockBroadcastFrom; --block-broadcast-from). Needs root and iproute2.
#
#   bench/nodes.sh [--nodes K] [--ranks-per-node R] [--rate RATE] [--rounds N] [--timeout SECONDS] [--quick]
#
# On one machine, K network namespaces stand for K nodes, each with one `pmpi agent` and R ranks (default 1), joined through a
# bridge by links that tc shapes to RATE each way (default 1gbit, as between the machines of a campus): so, as on
# real nodes, each link's bandwidth bounds a broadcast, not the copies of ranks sharing cores (on one node the
# binomial tree always wins: docs/bench-log/2026-11-26-broadcast-by-blocks-between-nodes.md). Every daemon and rank
# speaks TLS with one throwaway cluster credential. Each round runs `Pmpi.Bench collectives` twice, with blocks off and
# with blocks from any size, in an order that reverses from one round to the next; the table gives per size the medians
# and the ratio blocks/binomial with its min–max over the rounds, and the Allreduce (sum of doubles) that both runs time
# alike. Every child runs under `timeout`; the namespaces go on exit.
set -euo pipefail

nodes=4
per_node=1
rate=1gbit
rounds=
quick=0
child_timeout=600
while [[ $# -gt 0 ]]; do
  case "$1" in
    --nodes) nodes="${2:?--nodes needs a number}"; shift ;;
    --ranks-per-node) per_node="${2:?--ranks-per-node needs a number}"; shift ;;
    --rate) rate="${2:?--rate needs a tc rate, e.g. 1gbit}"; shift ;;
    --rounds) rounds="${2:?--rounds needs a number}"; shift ;;
    --timeout) child_timeout="${2:?--timeout needs seconds}"; shift ;;
    --quick) quick=1 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "nodes.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done
rounds="${rounds:-$([[ $quick -eq 1 ]] && echo 1 || echo 3)}"
sizes=$([[ $quick -eq 1 ]] && echo "65536 1048576" || echo "8192 32768 65536 262144 1048576 4194304")
if [[ $(id -u) -ne 0 ]] || ! command -v ip >/dev/null || ! command -v tc >/dev/null; then
  echo "nodes.sh: needs root and iproute2 (ip, tc): apt-get install -y iproute2" >&2
  exit 1
fi

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
prefix="pmpi-nodes-$$"
switch="$prefix-switch"
cleanup() {
  local pid ns
  for pid in $(cat "$work"/*.pid 2>/dev/null); do pkill -TERM -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null; done
  for ns in $(ip netns list 2>/dev/null | grep -o "^$prefix-[a-z0-9]*"); do ip netns del "$ns"; done
  rm -rf "$work"
}
trap cleanup EXIT
export DOTNET_NOLOGO=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

echo "nodes.sh: building bench/Pmpi.Bench and the pmpi CLI (Release)" >&2
timeout 600 dotnet build "$repo/bench/Pmpi.Bench" -c Release -v q -nologo >&2
timeout 600 dotnet build "$repo/src/Pmpi.Cli" -c Release -v q -nologo >&2
bench_dll="$repo/bench/Pmpi.Bench/bin/Release/net10.0/Pmpi.Bench.dll"
pmpi_dll="$repo/src/Pmpi.Cli/bin/Release/net10.0/pmpi.dll"

# The network: node k is namespace $prefix-k at 10.203.0.k, its veth's other end on the switch namespace's bridge;
# both ends shaped to $rate, so each node sends and receives at most $rate.
address() { echo "10.203.0.$1"; }
shape() { tc -n "$1" qdisc add dev "$2" root tbf rate "$rate" burst 256kb latency 20ms; }
ip netns add "$switch"
ip -n "$switch" link add br0 type bridge
ip -n "$switch" link set br0 up
names=()
for ((k = 1; k <= nodes; k++)); do
  ns="$prefix-$k"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$ns" link add eth0 type veth peer name "port$k" netns "$switch"
  ip -n "$ns" addr add "$(address "$k")/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$switch" link set "port$k" master br0 up
  shape "$ns" eth0
  shape "$switch" "port$k"
  names+=(--name "$(address "$k")")
done
timeout 60 dotnet "$pmpi_dll" cluster init --dir "$work/cluster" "${names[@]}" >/dev/null

for ((k = 1; k <= nodes; k++)); do
  timeout "$((child_timeout * 2 * rounds + 300))" ip netns exec "$prefix-$k" dotnet "$pmpi_dll" agent --bind "$(address "$k")" --port 7399 \
    --slots "$per_node" --credentials "$work/cluster" --rank-address "$(address "$k")" >"$work/agent$k.out" 2>"$work/agent$k.err" &
  echo $! >"$work/agent$k.pid"
done
for ((k = 1; k <= nodes; k++)); do
  for ((i = 0; i < 300; i++)); do grep -q "pmpi agent listening" "$work/agent$k.out" && break; sleep 0.2; done
  grep -q "pmpi agent listening" "$work/agent$k.out" || { cat "$work/agent$k.err" >&2; echo "nodes.sh: the agent of node $k did not start." >&2; exit 1; }
done

# computation FROM: $per_node ranks per node, broadcasting by blocks from FROM bytes.
computation() {
  echo "<computation name=\"nodes-bench\" xmlns=\"urn:pmpi:computation:v1\">"
  for ((k = 1; k <= nodes; k++)); do echo "  <node name=\"node$k\" agent=\"$(address "$k"):7399\" slots=\"$per_node\"/>"; done
  echo "  <ranks program=\"$bench_dll\" count=\"$((nodes * per_node))\">"
  for arg in collectives --device grpc --ranks "$((nodes * per_node))" --jit-warmup --timeout "$child_timeout" --block-broadcast-from "$1" --sizes $sizes \
    $([[ $quick -eq 1 ]] && echo --quick); do
    echo "    <arg>$arg</arg>"
  done
  echo "  </ranks>"
  echo "</computation>"
}
computation 2147483647 >"$work/binomial.xml"
computation 1 >"$work/blocks.xml"

run() {
  local algorithm="$1"
  echo "nodes.sh: [round $round/$rounds] $algorithm" >&2
  timeout "$child_timeout" ip netns exec "$prefix-1" dotnet "$pmpi_dll" run --master "$(address 1):7399" --credentials "$work/cluster" \
    "$work/$algorithm.xml" >"$work/$algorithm.$round" 2>"$work/$algorithm.$round.err" \
    || { tail -5 "$work/$algorithm.$round.err" >&2; echo "nodes.sh: $algorithm in round $round failed." >&2; : >"$work/$algorithm.$round"; }
}
for ((round = 1; round <= rounds; round++)); do
  if (( round % 2 )); then run binomial; run blocks; else run blocks; run binomial; fi
done

echo "# bench/nodes.sh, $nodes nodes of $per_node ranks, links shaped to $rate, $rounds rounds$([[ $quick -eq 1 ]] && echo ", --quick"), load average $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cores"
python3 - "$work" "$rounds" <<'PY'
import statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def load(algorithm, r, operation="bcast"):
    rows = {}
    try:
        for line in open(f"{work}/{algorithm}.{r}"):
            parts = line.strip().removeprefix("[0] ").split("\t")
            if len(parts) == 3 and parts[0] == operation:
                rows[int(parts[1])] = float(parts[2])
    except FileNotFoundError:
        pass
    return rows
def label(size):
    return f"{size >> 20} MB" if size >= 1 << 20 else f"{size >> 10} KB"
pairs = [(load("binomial", r), load("blocks", r)) for r in range(1, rounds + 1)]
pairs = [(b, s) for b, s in pairs if b and s]
if not pairs:
    sys.exit("nodes.sh: no round produced both runs.")
print("| Broadcast size | binomial µs | blocks µs | blocks / binomial |")
print("|---|---|---|---|")
for size in sorted(pairs[0][0]):
    both = [(b[size], s[size]) for b, s in pairs if size in b and size in s]
    ratios = [s / b for b, s in both]
    print(f"| {label(size)} | {statistics.median(b for b, _ in both):.0f} | {statistics.median(s for _, s in both):.0f} | "
          f"{statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f}) |")
allreduce = [run for r in range(1, rounds + 1) for a in ("binomial", "blocks") if (run := load(a, r, "allreduce"))]
print("\n| Allreduce size | µs, median (min–max) over every run |")
print("|---|---|")
for size in sorted(allreduce[0]) if allreduce else []:
    times = [run[size] for run in allreduce if size in run]
    print(f"| {label(size)} | {statistics.median(times):.0f} ({min(times):.0f}–{max(times):.0f}) |")
print(f"\n{len(pairs)} of {rounds} rounds produced both runs.")
PY

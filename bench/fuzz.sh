#!/usr/bin/env bash
# The long run of PMPI's randomized mutation tests: protobuf messages, gRPC framing, HTTP/2 frames and computation
# files against a real agent (and its master), a real rank endpoint (from a stranger, and from a peer of its job behind
# a valid Hello), and the computation file reader. CI runs the
# same tests on a fixed, quick seed set; this runs many more seeds and calls per seed. A failure names its seed, and
# PMPI_FUZZ_SEEDS=<seed> reproduces it.
#
#   bench/fuzz.sh [--seeds FIRST-LAST] [--iterations N] [--timeout SECONDS]
#
# --seeds (default 1-200) and --iterations (calls per seed and endpoint, default 500; the file reader does ten times
# as many) become PMPI_FUZZ_SEEDS and PMPI_FUZZ_ITERATIONS; --timeout (default 7200) bounds the whole run.
set -euo pipefail

seeds=1-200
iterations=500
run_timeout=7200
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seeds) seeds="${2:?--seeds needs FIRST-LAST}"; shift ;;
    --iterations) iterations="${2:?--iterations needs a number}"; shift ;;
    --timeout) run_timeout="${2:?--timeout needs seconds}"; shift ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
  shift
done

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PMPI_FUZZ_SEEDS="$seeds" PMPI_FUZZ_ITERATIONS="$iterations"
echo "fuzz: seeds $seeds, $iterations calls per seed and endpoint"
timeout "$run_timeout" dotnet test "$repo/tests/Pmpi.Agent.Tests" --filter "FullyQualifiedName~Fuzz"
timeout "$run_timeout" dotnet test "$repo/tests/Pmpi.Core.GrpcDevice.Tests" --filter "FullyQualifiedName~Fuzz"
timeout "$run_timeout" dotnet test "$repo/tests/Pmpi.Integration.Tests" --filter "FullyQualifiedName~FuzzTests"

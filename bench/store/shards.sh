#!/usr/bin/env bash
# Per-node conversion and shard merge throughput (issue 22 targets: >= 2 M events/s per core for
# the conversion of a node's data, >= 20 M events/s for the shard merge), side by side with the
# one-piece conversion of the same capture, medians over RUNS. See shard_bench.cpp.
#
#   bench/store/shards.sh [BUILD] [NODES] [RANKS_PER_NODE] [EVENTS_PER_RANK] [RUNS]
#   bench/store/shards.sh build 4 4 250000 3      # 4 M events
set -euo pipefail
build=${1:-build}
exec "$build/bench/shard_bench" "${2:-4}" "${3:-4}" "${4:-250000}" "${5:-3}"

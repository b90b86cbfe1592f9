#!/usr/bin/env bash
# Per-node conversion and shard merge throughput (issue 22 targets: >= 2 M events/s per core for
# the conversion of a node's data, >= 20 M events/s for the shard merge), side by side with the
# one-piece conversion of the same capture, medians over RUNS. The merge is also timed with its
# event rows copied by SQL (the merge before the page copy, per CPU-second) in the same run. See
# shard_bench.cpp.
# With BASE=OTHER_BUILD each run of OTHER_BUILD's shard_bench comes right before BUILD's (side by
# side, e.g. a build of main), and the medians of both are printed.
#
#   bench/store/shards.sh [BUILD] [NODES] [RANKS_PER_NODE] [EVENTS_PER_RANK] [RUNS]
#   bench/store/shards.sh build 4 4 250000 3      # 4 M events
#   BASE=build-main bench/store/shards.sh build 4 4 250000 5
set -euo pipefail
build=${1:-build}
nodes=${2:-4} per_node=${3:-4} events=${4:-250000} runs=${5:-3}
[ -n "${BASE:-}" ] || exec "$build/bench/shard_bench" "$nodes" "$per_node" "$events" "$runs"

log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for ((i = 1; i <= runs; i++)); do
    for side in base current; do
        dir=$build
        [ "$side" = base ] && dir=$BASE
        # "run 1: node conversion A M events/s per core (...), shard merge B M events/s (C per
        # CPU-second), one-piece conversion D M events/s per core (...)"
        "$dir/bench/shard_bench" "$nodes" "$per_node" "$events" 1 | grep '^run 1:' |
            sed -E 's/.*node conversion ([0-9.]+) .*shard merge ([0-9.]+) M events\/s \(([0-9.]+) per.*one-piece conversion ([0-9.]+) .*/\1 \2 \3 \4/' |
            tee -a "$log/$side" | sed "s/^/$side run $i: node, merge wall, merge per CPU-s, one-piece (M events\/s): /"
    done
done
for side in base current; do
    printf '%-7s medians: node conversion %s M events/s per core, shard merge %s M events/s (%s per CPU-second), one-piece %s M events/s per core\n' \
        "$side" "$(cut -d' ' -f1 "$log/$side" | median)" "$(cut -d' ' -f2 "$log/$side" | median)" \
        "$(cut -d' ' -f3 "$log/$side" | median)" "$(cut -d' ' -f4 "$log/$side" | median)"
done
printf 'load now: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"

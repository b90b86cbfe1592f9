#!/usr/bin/env bash
# Whole-run overhead of the counters source at the default sampling period: the same compute
# loop under `hpcprof run --counters none` and `--counters default` (timer 10 ms, MPI
# boundaries), best of N runs each.   bench/counters/overhead.sh BUILD_DIR [runs]
set -euo pipefail
build=${1:?build dir}
runs=${2:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
best() {
    local best=999999
    for _ in $(seq "$runs"); do
        local t0 t1
        t0=$(date +%s%N)
        "$build/bin/hpcprof" run -q --force -o "$work/t.hpcprof" "$@" -- "$build/tests/counter_workload" spin 500 2>/dev/null
        t1=$(date +%s%N)
        local ms=$(((t1 - t0) / 1000000))
        ((ms < best)) && best=$ms
    done
    echo "$best"
}
none=$(best --counters none)
def=$(best --counters default)
soft=$(best --counters software)
echo "spin 500 ms, best of $runs: counters none ${none} ms, default ${def} ms, software ${soft} ms"

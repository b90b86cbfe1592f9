#!/usr/bin/env bash
# Generates synthetic traces with bench/analyzer's generator and runs the GUI benchmark on each,
# before (events only, every lane expanded) and after (class mipmap and rank summary rows; its
# cache built cold, then read warm), side by side in one run; first the mipmap's cold build alone,
# rank by rank (as before) against one sweep per track on 1 worker and on all (--mipmap 3: medians
# of 3 builds each, and whether they agree).
# Usage: bench/gui/run_gui_bench.sh [BUILD_DIR] [RANKS:EVENTS ...]
# (default: 64:1000000 64:10000000 1024:10000000)
set -euo pipefail
build=${1:-build}
shift || true
cases=("${@:-64:1000000 64:10000000 1024:10000000}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for c in ${cases[@]}; do
    ranks=${c%%:*} n=${c##*:}
    echo "== $ranks ranks, $n events"
    "$build/bench/analyzer/analyzer_bench" gen "$dir/t.hpcprof" "$ranks" "$n" >&2
    "$build/bench/gui/gui_bench" --mipmap 3 "$dir/t.hpcprof"
    "$build/bench/gui/gui_bench" --before "$dir/t.hpcprof"
    "$build/bench/gui/gui_bench" --cold "$dir/t.hpcprof"
    "$build/bench/gui/gui_bench" "$dir/t.hpcprof"
    rm -f "$dir/t.hpcprof" "$dir/t.hpcprof.lanes"
done

#!/usr/bin/env bash
# Generates 64-rank synthetic traces with bench/analyzer's generator (1 and 10 million events by
# default) and runs the GUI benchmark on each. Usage: bench/gui/run_gui_bench.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
build=${1:-build}
shift || true
sizes=("${@:-1000000 10000000}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in ${sizes[@]}; do
    "$build/bench/analyzer/analyzer_bench" gen "$dir/t.hpcprof" 64 "$n" >&2
    "$build/bench/gui/gui_bench" "$dir/t.hpcprof"
    rm -f "$dir/t.hpcprof"
done

#!/usr/bin/env bash
# Generates 64-rank synthetic traces of 1, 10 and 30 million events and times the analysis of
# each (seconds, peak RSS). Usage: bench/analyzer/run_analyzer_bench.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
build=${1:-build}
shift || true
sizes=("${@:-1000000 10000000 30000000}")
bench="$build/bench/analyzer/analyzer_bench"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for n in ${sizes[@]}; do
    "$bench" gen "$dir/t.hpcprof" 64 "$n" >&2
    "$bench" analyze "$dir/t.hpcprof"
    rm -f "$dir/t.hpcprof"
done

#!/usr/bin/env bash
# Generates 64-rank synthetic traces of 1, 10 and 30 million events and times the analysis of
# each RUNS times (default 3): every run's line, then the median of wall seconds, CPU seconds
# and peak RSS. THREADS sets the analysis's worker threads (default: the hardware's).
# Usage: [RUNS=3] [THREADS=0] bench/analyzer/run_analyzer_bench.sh [BUILD_DIR] [SIZES...]
set -euo pipefail
build=${1:-build}
shift || true
sizes=("${@:-1000000 10000000 30000000}")
runs=${RUNS:-3}
threads=${THREADS:-0}
bench="$build/bench/analyzer/analyzer_bench"
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
for n in ${sizes[@]}; do
    "$bench" gen "$dir/t.hpcprof" 64 "$n" >&2
    size_mb=$(( $(stat -c %s "$dir/t.hpcprof") / 1000000 ))
    : > "$dir/runs.txt"
    for ((i = 0; i < runs; ++i)); do
        "$bench" analyze "$dir/t.hpcprof" "$threads" | tee -a "$dir/runs.txt"
    done
    field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" "$dir/runs.txt" | median; }
    echo "median of $runs: events=$n trace_mb=$size_mb seconds=$(field seconds)" \
         "cpu_seconds=$(field cpu_seconds) peak_rss_mb=$(field peak_rss_mb)"
    rm -f "$dir/t.hpcprof"
done

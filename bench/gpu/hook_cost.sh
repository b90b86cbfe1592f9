#!/usr/bin/env bash
# CPU-side cost of the NVTX and NCCL hooks per call, side by side: REPS alternating runs without
# and with the agent (recording), CALLS calls each; prints medians, added ns and the ratio.
#
#   bench/gpu/hook_cost.sh [BUILD_DIR] [REPS] [CALLS]
set -euo pipefail
build=${1:-build}
reps=${2:-7}
calls=${3:-1000000}
bench=$build/bench/gpu_hook_bench
agent=$(realpath "$build/lib/libhpcprof.so")
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
for what in nvtx nccl; do
    without=()
    with=()
    for ((i = 0; i < reps; i++)); do
        without+=("$("$bench" "$what" "$calls")")
        rm -rf "${raw:?}"/*
        with+=("$(HPCPROF_RAW_DIR=$raw HPCPROF_THREAD_BUFFER_MB=1024 LD_PRELOAD=$agent \
            NVTX_INJECTION64_PATH=$agent "$bench" "$what" "$calls")")
    done
    m0=$(median "${without[@]}")
    m1=$(median "${with[@]}")
    echo "$what: without agent (ns/call): ${without[*]}"
    echo "$what: with agent    (ns/call): ${with[*]}"
    awk -v w="$what" -v a="$m0" -v b="$m1" 'BEGIN {printf "%s: median without %.2f ns, with %.2f ns, added %.2f ns per call (ratio %.2f)\n", w, a, b, b - a, b / a}'
done

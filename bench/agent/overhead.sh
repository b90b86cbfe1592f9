#!/usr/bin/env bash
# Agent overhead per intercepted call, measured side by side: REPS runs of the pwrite loop
# without the agent, with it, and with it but without the provisioning helper
# (HPCPROF_PROVISION_HELPER=0), alternating, each run CALLS calls. Prints the medians and the
# added ns per call (median with - median without).
#
#   bench/agent/overhead.sh [BUILD_DIR] [REPS] [CALLS]
set -euo pipefail
build=${1:-build}
reps=${2:-7}
calls=${3:-2000000}
loop=$build/bench/pwrite_loop
agent=$build/lib/libhpcprof.so
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
without=()
with=()
nohelper=()
for ((i = 0; i < reps; i++)); do
    without+=("$("$loop" "$calls")")
    rm -rf "${raw:?}"/*
    # Thread buffer big enough for every call: the benchmark measures recording, not dropping.
    with+=("$(HPCPROF_RAW_DIR=$raw HPCPROF_THREAD_BUFFER_MB=512 LD_PRELOAD=$agent "$loop" "$calls")")
    rm -rf "${raw:?}"/*
    nohelper+=("$(HPCPROF_PROVISION_HELPER=0 HPCPROF_RAW_DIR=$raw HPCPROF_THREAD_BUFFER_MB=512 \
        LD_PRELOAD=$agent "$loop" "$calls")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
m0=$(median "${without[@]}")
m1=$(median "${with[@]}")
m2=$(median "${nohelper[@]}")
echo "runs without agent (ns/call): ${without[*]}"
echo "runs with agent    (ns/call): ${with[*]}"
echo "runs, no helper    (ns/call): ${nohelper[*]}"
awk -v a="$m0" -v b="$m1" 'BEGIN {printf "median without %.2f ns, with %.2f ns, added %.2f ns per call (ratio %.3f)\n", a, b, b - a, b / a}'
awk -v a="$m0" -v b="$m2" 'BEGIN {printf "without the provisioning helper: median %.2f ns, added %.2f ns per call\n", b, b - a}'

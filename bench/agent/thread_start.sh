#!/usr/bin/env bash
# Thread start cost and raw size per thread, side by side: REPS alternating runs of
# bench/thread_start (THREADS threads started one after another, each making CALLS pwrite calls)
# without the agent, with it (all sources, as `hpcprof run` records by default), with it
# recording I/O only, and, when OLD_AGENT names another libhpcprof.so (an older build), with
# that one. Per configuration, medians over the runs of: a thread's life (pthread_create to the
# end of pthread_join), its start (pthread_create to its first instruction), its first call
# (where the agent sets the thread's file up), its exit (end of its work to the end of
# pthread_join), the run's total, and the disk space each thread's raw file takes (allocated
# blocks, median over the run's thread files). Each run's figures are themselves medians over
# its threads; on a busy machine the scheduler adds a long tail that the totals show.
#
#   bench/agent/thread_start.sh [BUILD_DIR] [REPS] [THREADS] [CALLS]
#   OLD_AGENT=/path/to/old/libhpcprof.so bench/agent/thread_start.sh build 7
#
# The raw files go to a fresh folder under ${RAW_PARENT:-${TMPDIR:-/tmp}}: the filesystem there
# matters (creating a file costs 2 us on tmpfs, 100-300 us on a busy ext4).
set -euo pipefail
build=${1:-build}
reps=${2:-7}
threads=${3:-500}
calls=${4:-1}
bin=$build/bench/thread_start
agent=$build/lib/libhpcprof.so
raw=$(mktemp -d "${RAW_PARENT:-${TMPDIR:-/tmp}}/hpcprof-thread-bench.XXXXXX")
trap 'rm -rf "$raw"' EXIT

configs=(without agent agent_io)
[[ -n "${OLD_AGENT:-}" ]] && configs+=(old_agent old_agent_io)

# Runs one configuration; prints "life start first exit total raw_kib".
run() {
    rm -rf "${raw:?}"/*
    local env=()
    case $1 in
    without) env=() ;;
    agent) env=(LD_PRELOAD="$agent" HPCPROF_RAW_DIR="$raw") ;;
    agent_io) env=(LD_PRELOAD="$agent" HPCPROF_RAW_DIR="$raw" HPCPROF_SOURCES=io) ;;
    old_agent) env=(LD_PRELOAD="$OLD_AGENT" HPCPROF_RAW_DIR="$raw") ;;
    old_agent_io) env=(LD_PRELOAD="$OLD_AGENT" HPCPROF_RAW_DIR="$raw" HPCPROF_SOURCES=io) ;;
    esac
    local out
    out=$(env "${env[@]}" "$bin" "$threads" "$calls")
    # Allocated KiB of each thread file (spares no thread took are removed at exit).
    local kib
    kib=$(find "$raw" -name 'thread-*' -type f -printf '%b\n' 2>/dev/null |
        awk '{print $1 / 2}' | sort -g | awk '{a[NR]=$1} END {print NR ? a[int((NR+1)/2)] : 0}')
    read -r life start first later exitt total <<<"$out"
    echo "$life $start $first $exitt $total $kib"
}

declare -A col
for ((i = 0; i < reps; i++)); do
    for c in "${configs[@]}"; do
        read -r life start first exitt total kib < <(run "$c")
        col[$c,life]+="$life "
        col[$c,start]+="$start "
        col[$c,first]+="$first "
        col[$c,exit]+="$exitt "
        col[$c,total]+="$total "
        col[$c,kib]+="$kib "
    done
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "$threads threads, $calls call(s) each, $reps runs per configuration, raw files in $(df --output=fstype "$raw" | tail -1) (medians)"
printf '%-14s %10s %10s %12s %10s %10s %15s\n' configuration "life us" "start us" "1st call us" \
    "exit us" "total ms" "raw KiB/thread"
for c in "${configs[@]}"; do
    printf '%-14s %10.1f %10.1f %12.1f %10.1f %10.1f %15s\n' "$c" "$(median "${col[$c,life]}")" \
        "$(median "${col[$c,start]}")" "$(median "${col[$c,first]}")" "$(median "${col[$c,exit]}")" \
        "$(median "${col[$c,total]}")" \
        "$([[ $c == without ]] && echo - || median "${col[$c,kib]}")"
done
base=$(median "${col[without,life]}")
for c in "${configs[@]:1}"; do
    awk -v c="$c" -v a="$base" -v b="$(median "${col[$c,life]}")" \
        'BEGIN {printf "%s: thread start+exit adds %.1f us per thread (%.1fx the thread alone)\n", c, b - a, b / a}'
done

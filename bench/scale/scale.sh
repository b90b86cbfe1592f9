#!/usr/bin/env bash
# Analysis at scale (issue 22): for each RANKS, a job of RANKS x EVENTS events per rank from
# bench/scale/jobgen (written once as a trace, kept in DIR), then `hpcprof report --format json` of it
# RUNS times: wall, CPU and peak RSS (GNU time) and the load average before each run, then the
# medians. With BASE=OTHER_BUILD each run times OTHER_BUILD's hpcprof right before BUILD's (side
# by side, e.g. a build of main) and the two JSON reports are compared byte for byte (but their
# hpcprof_version), else but the ranks' step lists (a job of more than 100,000 rank-steps lists
# each rank's slowest steps only, steps.rank_items; its statistics stay). The
# generator's answers (straggler, wait totals) are checked against the report.
#
#   bench/scale/scale.sh [BUILD] [EVENTS_PER_RANK] [RUNS] [DIR] [RANKS...]
#   BASE=build-main bench/scale/scale.sh build 20000 3 /tmp/hpcprof-scale 64 256 1024
set -euo pipefail

build=${1:-build}
events=${2:-20000}
runs=${3:-3}
dir=${4:-/tmp/hpcprof-scale}
shift $(($# < 4 ? $# : 4))
rank_list=("$@")
((${#rank_list[@]})) || rank_list=(64 256 1024)
[ -x /usr/bin/time ] || { echo "scale: needs GNU time (/usr/bin/time)" >&2; exit 2; }
mkdir -p "$dir"
# shellcheck source=bench/scale/common.sh
source "$(dirname "$0")/common.sh"

sides=()
[ -n "${BASE:-}" ] && sides+=("base=$BASE")
sides+=("current=$build")


for ranks in "${rank_list[@]}"; do
    trace=$dir/job-$ranks-$events.hpcprof
    if [ ! -s "$trace" ]; then
        "$build/bench/jobgen" trace "$trace" "$ranks" "$events" 1 "$trace.answers.json"
    fi
    total=$(python3 -c "import json; print(json.load(open('$trace.answers.json'))['events'])")
    printf '%d ranks x %d events/rank = %d events, trace %.0f MiB\n' "$ranks" "$events" "$total" \
        "$(echo "$(stat -c %s "$trace") / 1048576" | bc -l)"
    for side in "${sides[@]}"; do rm -f "$dir/${side%%=*}.log"; done
    for ((i = 1; i <= runs; i++)); do
        for side in "${sides[@]}"; do
            label=${side%%=*}
            load=$(cut -d' ' -f1 /proc/loadavg)
            /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" "${side#*=}/bin/hpcprof" report --format json \
                -o "$dir/$label-$ranks.json" "$trace" >/dev/null 2>"$dir/stderr.txt" ||
                { cat "$dir/stderr.txt" >&2; exit 1; }
            awk -v load="$load" '{printf "%.2f %.2f %.1f %s\n", $1, $2 + $3, $4 / 1024, load}' \
                "$dir/time.txt" >>"$dir/$label.log"
        done
    done
    for side in "${sides[@]}"; do
        label=${side%%=*}
        log=$dir/$label.log
        printf '  %-8s median wall %6s s, CPU %6s s, peak RSS %7s MiB  (runs: %s)\n' "$label" \
            "$(cut -d' ' -f1 "$log" | median)" "$(cut -d' ' -f2 "$log" | median)" \
            "$(cut -d' ' -f3 "$log" | median)" "$(cut -d' ' -f1,3 "$log" | paste -sd';')"
    done
    check_answers "$dir/current-$ranks.json" "$trace.answers.json"
    if [ -n "${BASE:-}" ]; then
        # Byte for byte but the hpcprof_version line (the builds' versions differ).
        if cmp -s <(grep -v '"hpcprof_version"' "$dir/base-$ranks.json") \
            <(grep -v '"hpcprof_version"' "$dir/current-$ranks.json"); then
            echo "  JSON reports: identical"
        elif same_but_rank_steps "$dir/base-$ranks.json" "$dir/current-$ranks.json"; then
            echo "  JSON reports: identical but the ranks' step lists (one of them keeps each rank's slowest steps)"
        else
            echo "  JSON reports: DIFFER (diff $dir/base-$ranks.json $dir/current-$ranks.json)"
        fi
    fi
done
printf 'cores: %s, load now: %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"

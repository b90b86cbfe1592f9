#!/usr/bin/env bash
# The analysis's memory against the number of events (issue 22, point 4): for each job
# RANKSxEVENTS (events per rank) a trace from bench/scale's jobgen (written once, kept in DIR),
# then `hpcprof report --format json` of it RUNS times with BASE's hpcprof and BUILD's side by
# side (alternating, so both see the same load): the medians of wall seconds and peak RSS (GNU
# time), MiB per million events, and whether the two JSON reports are byte-identical (but their
# hpcprof_version line).
#
#   BASE=OTHER_BUILD [RUNS=3] bench/analyzer/memory.sh [BUILD] [DIR] [RANKSxEVENTS...]
#   BASE=/tmp/main-build bench/analyzer/memory.sh build /tmp/hpcprof-mem 64x100000 64x300000 256x100000
#
# BASE (and BUILD) is a folder with bin/hpcprof; without BASE only BUILD is measured.
set -euo pipefail

build=${1:-build}
dir=${2:-/tmp/hpcprof-mem}
shift $(($# < 2 ? $# : 2))
jobs=("$@")
((${#jobs[@]})) || jobs=(64x100000 64x300000 256x100000)
runs=${RUNS:-3}
[ -x /usr/bin/time ] || { echo "memory: needs GNU time (/usr/bin/time)" >&2; exit 2; }
mkdir -p "$dir"
sides=()
[ -n "${BASE:-}" ] && sides+=("before=$BASE")
sides+=("after=$build")
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

printf '%-12s %10s  %-7s %10s %12s %14s\n' job events side wall_s peak_rss_mib mib_per_m_events
for job in "${jobs[@]}"; do
    ranks=${job%x*} events=${job#*x}
    trace=$dir/job-$ranks-$events.hpcprof
    [ -s "$trace" ] || "$build/bench/jobgen" trace "$trace" "$ranks" "$events" 1 "$trace.answers.json" >&2
    total=$(python3 -c "import json; print(json.load(open('$trace.answers.json'))['events'])")
    for side in "${sides[@]}"; do : >"$dir/${side%%=*}.log"; done
    for ((i = 1; i <= runs; i++)); do
        for side in "${sides[@]}"; do
            label=${side%%=*}
            /usr/bin/time -f '%e %M' -o "$dir/time.txt" "${side#*=}/bin/hpcprof" report --format json \
                -o "$dir/$label.json" "$trace" >/dev/null 2>"$dir/stderr.txt" || { cat "$dir/stderr.txt" >&2; exit 1; }
            cat "$dir/time.txt" >>"$dir/$label.log"
        done
    done
    for side in "${sides[@]}"; do
        label=${side%%=*}
        wall=$(cut -d' ' -f1 "$dir/$label.log" | median)
        rss=$(cut -d' ' -f2 "$dir/$label.log" | median)
        printf '%-12s %10d  %-7s %10.1f %12.0f %14.1f\n' "$job" "$total" "$label" "$wall" \
            "$(echo "$rss / 1024" | bc -l)" "$(echo "$rss / 1024 / ($total / 1000000)" | bc -l)"
    done
    if [ -n "${BASE:-}" ]; then
        if cmp -s <(grep -v '"hpcprof_version"' "$dir/before.json") <(grep -v '"hpcprof_version"' "$dir/after.json"); then
            echo "  $job: JSON reports identical"
        else
            echo "  $job: JSON reports DIFFER (diff $dir/before.json $dir/after.json)"
        fi
    fi
done

#!/usr/bin/env bash
# End-to-end cost of a multi-rank profiler trace set: `hpcprof import` of RANKS Kineto files of
# EVENTS events each (kineto_gen: about 291 bytes of JSON per event, so 461000 events make
# 128 MiB), then `hpcprof report --format json` of the trace, timed separately. Per step and run:
# wall, user + system CPU and peak RSS (GNU time), and the load average before the run, since the
# machine may be shared; then the medians. The set is generated once and kept in DIR. With
# BASE=OTHER_BUILD, each run times OTHER_BUILD's hpcprof right before BUILD's (side by side, e.g.
# a build of an earlier commit), each step from its own import.
#
#   bench/import/multirank.sh [BUILD] [RANKS] [EVENTS] [RUNS] [DIR]
#   bench/import/multirank.sh build 8 461000 3 /tmp/hpcprof-multirank     # ~1 GiB of JSON
#   BASE=/tmp/old/build bench/import/multirank.sh build 8 461000 3
set -euo pipefail

build=${1:-build}
ranks=${2:-8}
events=${3:-461000}
runs=${4:-3}
dir=${5:-/tmp/hpcprof-multirank}
hpcprof=$build/bin/hpcprof
[ -x /usr/bin/time ] || { echo "multirank: needs GNU time (/usr/bin/time)" >&2; exit 2; }

mkdir -p "$dir/set"
for ((r = 0; r < ranks; r++)); do
    f=$dir/set/rank$r.json
    [ -s "$f" ] || "$build/bench/kineto_gen" "$f" "$events" "$r" "$ranks" 2>/dev/null
done
json_bytes=$(cat "$dir"/set/rank*.json | wc -c)
printf 'set: %d ranks x %d events = %d events, %.1f MiB of JSON\n' \
    "$ranks" "$events" $((ranks * events)) "$(echo "$json_bytes / 1048576" | bc -l)"

# One timed command; appends "wall cpu rss_mib load" to the file $1.
timed() {
    local log=$1
    shift
    local load
    load=$(cut -d' ' -f1 /proc/loadavg)
    /usr/bin/time -f '%e %U %S %M' -o "$dir/time.txt" "$@" >/dev/null 2>"$dir/stderr.txt" ||
        { cat "$dir/stderr.txt" >&2; exit 1; }
    awk -v load="$load" '{printf "%.2f %.2f %.1f %s\n", $1, $2 + $3, $4 / 1024, load}' \
        "$dir/time.txt" >>"$log"
}

# The sides: label=build folder, the base first.
sides=()
[ -n "${BASE:-}" ] && sides+=("base=$BASE")
sides+=("current=$build")
rm -f "$dir"/*.log
for ((i = 1; i <= runs; i++)); do
    for side in "${sides[@]}"; do
        label=${side%%=*}
        bin=${side#*=}/bin/hpcprof
        timed "$dir/$label-import.log" "$bin" import -q --force "$dir/set" -o "$dir/$label.hpcprof"
        timed "$dir/$label-report.log" "$bin" report --format json -o "$dir/$label-report.json" \
            "$dir/$label.hpcprof"
    done
done

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for side in "${sides[@]}"; do
    label=${side%%=*}
    for step in import report; do
        log=$dir/$label-$step.log
        echo "$label $step (${side#*=}; wall s, CPU s, peak RSS MiB, load before):"
        sed 's/^/  /' "$log"
        printf '  median: wall %s s, CPU %s s, peak RSS %s MiB\n' "$(cut -d' ' -f1 "$log" | median)" \
            "$(cut -d' ' -f2 "$log" | median)" "$(cut -d' ' -f3 "$log" | median)"
    done
    printf '  trace %.1f MiB, JSON report %.1f MiB\n' \
        "$(echo "$(stat -c %s "$dir/$label.hpcprof") / 1048576" | bc -l)" \
        "$(echo "$(stat -c %s "$dir/$label-report.json") / 1048576" | bc -l)"
done
printf 'cores: %s, load now: %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"

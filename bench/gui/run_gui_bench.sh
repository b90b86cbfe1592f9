#!/usr/bin/env bash
# The GUI at scale, before and after side by side in one run, RUNS times each, medians: synthetic
# traces from bench/analyzer's generator, opened by the GUI's own pieces (gui_bench).
#   before  BEFORE's gui_bench --cold: the first opening of a trace whose conversion kept no class
#           summary, so the opening builds it from the events (a trace written without --lanes).
#           Default BEFORE: BUILD_DIR itself, whose --cold path is that same first opening.
#   keep    what `hpcprof run --lanes` / `hpcprof merge --lanes` add after writing the trace: the
#           summary's build and its file (gui_bench --keep: analyzer::keepClassSummary).
#   after   an opening of the trace with its kept summary (gui_bench, the file present): any
#           opening after the first, or the first of a trace written with --lanes.
# Columns: first complete screen (opening until every visible row is painted; the first screen
# is the whole run, so at 10 M events this is the wide view of a fresh opening), the jump to the
# whole run from a zoomed-in view, the paint per frame of a new view and of a repaint (medians
# over the zoom/pan script), and peak RSS.
# MIPMAP=1 also times the summary's build alone, rank by rank against one sweep per track
# (gui_bench --mipmap 1).
# Usage: [BEFORE=DIR] [RUNS=3] bench/gui/run_gui_bench.sh [BUILD_DIR] [RANKS:EVENTS ...]
# (default: 64:10000000 1024:10000000)
set -euo pipefail
build=${1:-build}
shift || true
before=${BEFORE:-$build}
runs=${RUNS:-3}
cases=("${@:-64:10000000 1024:10000000}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
field() { local v; v=$(grep -o "$1=[0-9.]*" "$2" | head -1 | cut -d= -f2); echo "${v:--}"; } # -: not reported
# One opening: its first complete screen, whole-run jump, paint medians and peak RSS.
record() {
    local out=$1 mode=$2
    eval "${mode}_screen+=($(field all_lanes_ms "$out"))"
    eval "${mode}_whole+=($(field whole "$out"))"
    eval "${mode}_paint+=($(field paint_median_ms "$out"))"
    eval "${mode}_repaint+=($(field repaint_median_ms "$out"))"
    eval "${mode}_cpu+=($(field paint_cpu_median_ms "$out"))"
    eval "${mode}_rss+=($(field peak_rss_mb "$out"))"
}
for c in ${cases[@]}; do
    ranks=${c%%:*} n=${c##*:}
    t=$dir/t.hpcprof
    rm -f "$t" "$t.lanes"
    "$build/bench/analyzer/analyzer_bench" gen "$t" "$ranks" "$n" >&2
    [[ ${MIPMAP:-0} == 1 ]] && "$build/bench/gui/gui_bench" --mipmap 1 "$t"
    before_screen=() before_whole=() before_paint=() before_repaint=() before_cpu=() before_rss=()
    after_screen=() after_whole=() after_paint=() after_repaint=() after_cpu=() after_rss=() keep=() bytes=()
    for ((i = 0; i < runs; i++)); do
        "$before/bench/gui/gui_bench" --cold "$t" >"$dir/before.txt"
        record "$dir/before.txt" before
        rm -f "$t.lanes"
        "$build/bench/gui/gui_bench" --keep "$t" >"$dir/keep.txt"
        keep+=("$(field keep_summary_ms "$dir/keep.txt")") bytes+=("$(field summary_bytes "$dir/keep.txt")")
        "$build/bench/gui/gui_bench" "$t" >"$dir/after.txt"
        record "$dir/after.txt" after
        rm -f "$t.lanes"
    done
    echo "== $ranks ranks, $n events: medians of $runs (before: $before, after: $build)"
    printf '%-8s %16s %14s %10s %14s %12s %12s\n' "" first_screen_ms whole_jump_ms paint_ms paint_cpu_ms repaint_ms peak_rss_mb
    for m in before after; do
        eval "printf '%-8s %16s %14s %10s %14s %12s %12s\n' $m \$(median \"\${${m}_screen[@]}\") \$(median \"\${${m}_whole[@]}\") \
            \$(median \"\${${m}_paint[@]}\") \$(median \"\${${m}_cpu[@]}\") \$(median \"\${${m}_repaint[@]}\") \$(median \"\${${m}_rss[@]}\")"
    done
    echo "keep (what run --lanes / merge --lanes add after writing the trace): $(median "${keep[@]}") ms, summary file $(median "${bytes[@]}") bytes"
    echo "runs: before first screen ${before_screen[*]} / after ${after_screen[*]}; paint before ${before_paint[*]} / after ${after_paint[*]}"
done

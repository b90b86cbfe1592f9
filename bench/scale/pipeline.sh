#!/usr/bin/env bash
# Capture to report on simulated nodes (issue 22 targets): for each RANKS, a raw capture of RANKS x
# EVENTS_PER_RANK events from bench/scale/jobgen (the agent's raw format, written once and kept in
# DIR), split into NODES node folders (ranks in blocks, as HPCPROF_SIM_NODES places them), then
# RUNS times, stage by stage with the hpcprof of BUILD:
#   convert   each node's folder into its shard (`hpcprof merge NODE_DIR --node nodeK`), CORES
#             nodes at a time (default: the machine's cores), as the node wrappers would;
#   merge     the shards into the trace (`hpcprof merge SHARDS -o T`); with BASE=OTHER_BUILD,
#             OTHER_BUILD's merge of the same shards right before (merge-base, side by side);
#   report    `hpcprof report --format json` of the trace;
#   one-piece (for comparison, ONE_PIECE=0 skips it) every process converted in one piece
#             (`hpcprof merge`), today's single-process path.
# Per stage: wall seconds, CPU seconds of all its processes, and the peak RSS of the largest one
# (GNU time), then the medians over RUNS, and the events per wall second and per CPU-second of
# the medians. The report is checked against the generator's answers.
# Disk: about 64 bytes per event of raw data plus 2 x 41 of shards and trace (and 41 more with
# the one-piece trace); the script says how much it needs and stops when it does not fit.
# For a job the disk cannot hold: CONSUME=1 removes each node's raw folder once the conversion
# is done and the shards once merged, as the node wrappers do (one run; the raw capture is
# generated again next time), and TRACE_DIR=DIR puts the trace (and its report's JSON) on another
# file system. NODE_RAW=1 (implies CONSUME=1) goes further, for a job whose raw capture does not
# fit the disk at all: each group of CORES nodes has its raw capture generated (untimed) just
# before it converts, as a node's ranks write theirs during the job, so the disk holds CORES
# nodes' raw data at a time (RAW_STORE=DIR puts it on another file system). SHARD_STORE=DIR moves
# each group's shards to DIR once converted (untimed: the copy a node makes to the shared file
# system) and, where this user may, drops the page cache before the merge (shards from other
# nodes are not in this one's cache). The 1 B runs of docs/performance.md:
#   CONSUME=1 ONE_PIECE=0 TRACE_DIR=/work/p bench/scale/pipeline.sh build 976563 1 /mnt/zstd 1024
#   NODE_RAW=1 RAW_STORE=/mnt/zstd SHARD_STORE=/mnt/zstd/shards TRACE_DIR=/work/p \
#       bench/scale/pipeline.sh build 976563 1 /work/n 1024
#
#   bench/scale/pipeline.sh [BUILD] [EVENTS_PER_RANK] [RUNS] [DIR] [RANKS...]
#   NODES=4 bench/scale/pipeline.sh build 20000 3 /tmp/hpcprof-pipeline 64 256 1024
#   BASE=build-main ONE_PIECE=0 bench/scale/pipeline.sh build 20000 3 /tmp/p 64 256 1024
set -euo pipefail

build=${1:-build}
events=${2:-20000}
runs=${3:-3}
dir=${4:-/tmp/hpcprof-pipeline}
shift $(($# < 4 ? $# : 4))
rank_list=("$@")
((${#rank_list[@]})) || rank_list=(64 256 1024)
nodes=${NODES:-4}
cores=${CORES:-$(nproc)}
one_piece=${ONE_PIECE:-1}
consume=${CONSUME:-0}
node_raw=${NODE_RAW:-0}
((node_raw)) && consume=1
((consume)) && runs=1 one_piece=0
shard_dir=${SHARD_STORE:-}
[ -z "$shard_dir" ] || mkdir -p "$shard_dir"
hpcprof=$(cd "$build" && pwd)/bin/hpcprof
jobgen=$(cd "$build" && pwd)/bench/jobgen
[ -x /usr/bin/time ] || { echo "pipeline: needs GNU time (/usr/bin/time)" >&2; exit 2; }
mkdir -p "$dir"
# shellcheck source=bench/scale/common.sh
source "$(dirname "$0")/common.sh"


# timed LOG CMD...: runs CMD under GNU time, appends "wall cpu peak_MiB" to LOG.
timed() {
    local log=$1
    shift
    /usr/bin/time -f '%e %U %S %M' -o "$log.one" "$@" >/dev/null 2>"$log.err" || { cat "$log.err" >&2; exit 1; }
    awk '{printf "%.2f %.2f %.1f\n", $1, $2 + $3, $4 / 1024}' "$log.one" >>"$log"
}

# stage LOG: the stage's wall (sum: the stage's processes ran one after the other, or the
# bracketing wall in $stage_wall), CPU (sum) and peak RSS (max) over its processes.
stage_line() {
    awk -v wall="$2" '{cpu += $2; if ($3 > rss) rss = $3} END {printf "%.2f %.2f %.1f\n", wall, cpu, rss}' "$1"
}


# split RAW NODES_DIR RANKS: the raw capture's process folders (proc-<10000 + rank>-<ts>) moved
# into NODES_DIR/node<rank * nodes / ranks>.
split_nodes() {
    local raw=$1 out=$2 ranks=$3
    for ((k = 0; k < nodes; k++)); do mkdir -p "$out/node$k"; done
    for p in "$raw"/proc-*; do
        local pid=${p##*/proc-}
        pid=${pid%%-*}
        mv "$p" "$out/node$(((pid - 10000) * nodes / ranks))/"
    done
    rmdir "$raw"
}

# first_rank K RANKS: the first rank split_nodes places on node K (rank * nodes / ranks == K).
first_rank() { echo $((($1 * $2 + nodes - 1) / nodes)); }

# convert_group FIRST LAST: nodes FIRST to LAST converted side by side into $work/shards, each
# under GNU time into $work/convert-run.log; prints the group's wall seconds.
convert_group() {
    local t0
    t0=$(date +%s.%N)
    seq "$1" "$2" | xargs -P "$cores" -I{} bash -c \
        'timed "$work/convert-run.log" "$hpcprof" merge "$node_dirs/node{}" --node node{} -o "$work/shards/shard-node{}.hpcprof"' ||
        return 1
    echo "$(date +%s.%N) - $t0" | bc
}

# convert_node_raw RANKS: NODE_RAW's conversion, CORES nodes at a time, each group's raw capture
# generated just before (and removed after); prints the sum of the groups' walls.
convert_node_raw() {
    local ranks=$1 wall=0 g k last w
    for ((g = 0; g < nodes; g += cores)); do
        last=$((g + cores - 1 < nodes - 1 ? g + cores - 1 : nodes - 1))
        for ((k = g; k <= last; k++)); do
            JOBGEN_RANKS=$(first_rank "$k" "$ranks"):$(first_rank $((k + 1)) "$ranks") \
                "$jobgen" raw "$node_dirs/node$k" "$ranks" "$events" 1 2>/dev/null
        done
        sync
        w=$(convert_group "$g" "$last") || return 1
        wall=$(echo "$wall + $w" | bc)
        for ((k = g; k <= last; k++)); do
            rm -rf "$node_dirs/node$k"
            [ -z "$shard_dir" ] || mv "$work/shards/shard-node$k.hpcprof" "$shard_dir/"
        done
    done
    echo "$wall"
}

for ranks in "${rank_list[@]}"; do
    total=$((ranks * events))
    need=$((total * (64 + 82 + (one_piece ? 41 : 0)) / 1048576))
    ((consume)) && need=$((total * (64 + 41) / 1048576))
    ((node_raw)) && need=$((total * (64 * cores / nodes + 41) / 1048576))
    free=$(df -Pm "$dir" | awk 'NR == 2 {print $4}')
    work=$dir/job-$ranks-$events
    trace=${TRACE_DIR:-$work}/trace-$ranks-$events.hpcprof
    node_dirs=$work/nodes
    ((node_raw)) && [ -n "${RAW_STORE:-}" ] && node_dirs=$RAW_STORE/nodes-$ranks-$events
    if [ ! -d "$work/nodes" ] && ((need + 2048 > free)); then
        echo "$ranks ranks x $events events: needs about $need MiB in $dir, $free MiB free: not run"
        continue
    fi
    if ((node_raw)); then
        rm -rf "$work" "$node_dirs"
        mkdir -p "$work" "$node_dirs"
        "$jobgen" answers - "$ranks" "$events" 1 >"$work/answers.json"
    elif [ ! -d "$work/nodes" ]; then
        rm -rf "$work"
        mkdir -p "$work"
        "$jobgen" raw "$work/raw" "$ranks" "$events" 1 "$work/answers.json" 2>/dev/null
        split_nodes "$work/raw" "$work/nodes" "$ranks"
    fi
    total=$(python3 -c "import json; print(json.load(open('$work/answers.json'))['events'])")
    if ((node_raw)); then
        raw="about $((total * 64 / 1048576)) MiB, $cores nodes' share at a time"
    else
        raw="$(du -sm "$node_dirs" | cut -f1) MiB"
    fi
    printf '%d ranks x %d events/rank = %d events on %d simulated nodes, %d at a time; raw %s\n' \
        "$ranks" "$events" "$total" "$nodes" "$cores" "$raw"
    rm -f "$work"/*.log
    for ((i = 1; i <= runs; i++)); do
        rm -rf "$work/shards" "$trace" "$work/whole.hpcprof"
        mkdir -p "$work/shards"
        export -f timed
        export hpcprof work node_dirs
        # CORES nodes at a time, as the node wrappers of one machine would.
        if ((node_raw)); then
            wall=$(convert_node_raw "$ranks")
        else
            wall=$(convert_group 0 $((nodes - 1)))
        fi
        stage_line "$work/convert-run.log" "$wall" >>"$work/convert.log"
        rm -f "$work/convert-run.log"
        ((consume)) && rm -rf "$node_dirs"
        shard_src=$work/shards
        if [ -n "$shard_dir" ]; then
            [ -n "$(ls "$work/shards")" ] && mv "$work/shards"/*.hpcprof "$shard_dir/"
            shard_src=$shard_dir
            sync
            [ -w /proc/sys/vm/drop_caches ] && echo 3 >/proc/sys/vm/drop_caches
        fi
        if [ -n "${BASE:-}" ]; then
            timed "$work/merge-base.log" "$BASE/bin/hpcprof" merge "$shard_src" -o "$work/base.hpcprof"
            rm -f "$work/base.hpcprof"
        fi
        timed "$work/merge.log" "$hpcprof" merge "$shard_src" -o "$trace"
        ((consume)) && rm -rf "$work/shards" "${shard_dir:-$work/shards}"/shard-node*.hpcprof
        timed "$work/report.log" "$hpcprof" report --format json -o "$trace.json" "$trace"
        if ((one_piece)); then
            mkdir -p "$work/whole"
            for p in "$work"/nodes/node*/proc-*; do ln -sfn "$p" "$work/whole/${p##*/}"; done
            timed "$work/one-piece.log" "$hpcprof" merge "$work/whole" -o "$work/whole.hpcprof"
        fi
    done
    shards="removed once merged"
    ((consume)) || shards="$(du -sm "$work/shards" | cut -f1) MiB"
    printf '  trace %s MiB, shards %s\n' "$(($(stat -c %s "$trace") / 1048576))" "$shards"
    stages=(convert)
    [ -n "${BASE:-}" ] && stages+=(merge-base)
    stages+=(merge report)
    ((one_piece)) && stages+=(one-piece)
    for s in "${stages[@]}"; do
        log=$work/$s.log
        wall=$(cut -d' ' -f1 "$log" | median) cpu=$(cut -d' ' -f2 "$log" | median)
        printf '  %-10s median wall %7s s, CPU %7s s (%5.2f M events/s, %5.2f per CPU-s), peak RSS %7s MiB  (wall;RSS per run: %s)\n' \
            "$s" "$wall" "$cpu" "$(echo "$total / $wall / 1000000" | bc -l)" "$(echo "$total / $cpu / 1000000" | bc -l)" \
            "$(cut -d' ' -f3 "$log" | median)" "$(cut -d' ' -f1,3 "$log" | paste -sd';')"
    done
    check_answers "$trace.json" "$work/answers.json"
    [ -n "${KEEP:-}" ] || rm -rf "$work/shards" "$work/whole" "$work/whole.hpcprof"
done
printf 'cores: %s, load now: %s\n' "$(nproc)" "$(cut -d' ' -f1-3 /proc/loadavg)"

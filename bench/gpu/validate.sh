#!/usr/bin/env bash
# GPU validation of hpcprof's CUDA/NVTX/NCCL capture, for a machine with an NVIDIA GPU
# (docs/gpu-capture.md; the reports of its runs are in docs/validation/).
#
#   bench/gpu/validate.sh [BUILD_DIR] [OUT_MD]
#
# Builds hpcprof with CUPTI, NVTX and NCCL (PREBUILT=1: BUILD_DIR already holds bin/hpcprof,
# lib/libhpcprof.so and samples/training_step, as bench/gpu/device_run.sh brings them to a
# machine without the build's dependencies), runs samples/cuda/training_step under
# `hpcprof run`, checks the trace with SQL (kernels, copies, memsets, syncs, graph launches, NVTX
# steps, NCCL calls; every GPU record correlated to its API call; every kernel inside the NVTX
# step that launched it; GPU and CPU timestamps on one clock within 10 us; nothing dropped),
# measures the slowdown against unprofiled runs (kernel-launch loop, training-like loop), then
# runs a small PyTorch DDP loop (NCCL, one GPU) plain, under `hpcprof run` and under
# torch.profiler, compares the slowdowns, and checks that hpcprof's kernel count and kernel time
# in the timed steps agree with the PyTorch profiler's own trace of the same loop (read with
# `hpcprof import`). Writes a markdown report (default docs/validation/gpu-<date>.md), keeps the
# logs in LOG_DIR when set, and exits non-zero if any check failed. Budget: about 5 minutes.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build-gpu-validate}
stamp=$(date -u +%Y%m%d-%H%M)
out=${2:-$here/docs/validation/gpu-$stamp.md}
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
logs=${LOG_DIR:-$work}
mkdir -p "$logs"
torch_steps=${TORCH_STEPS:-200}
fails=0
report() { echo "$*" | tee -a "$out"; }
# sql DB QUERY: the first row, columns separated by '|' (sqlite3, or the project's Python
# package, python/hpcprof, where the command is not installed).
sql() {
    if command -v sqlite3 >/dev/null; then
        sqlite3 "$1" "$2" 2>&1 | head -1
    else
        PYTHONPATH=$here/python python3 -c 'import sys, hpcprof
try:
    rows = hpcprof.open(sys.argv[1]).query(sys.argv[2])
    print("|".join("" if v is None else str(v) for v in rows[0].values()) if rows else "")
except Exception as e:
    print("error:", e)' "$1" "$2"
    fi
}
check() { # check NAME SQL EXPECTATION(awk condition on $1) [DB]
    local name=$1 query=$2 cond=$3 db=${4:-$work/step.hpcprof} v
    v=$(sql "$db" "$query")
    verdict "$name" "$v" "$cond"
}
verdict() { # verdict NAME VALUE EXPECTATION(awk condition on $1)
    local name=$1 v=$2 cond=$3
    # Numbers only: an SQL error message must not pass a comparison as a string.
    if awk -v x="$v" "BEGIN { if (x !~ /^-?[0-9]+([.][0-9]+)?([eE][-+]?[0-9]+)?\$/) exit 1; \$1 = x + 0; exit !($cond) }"; then
        report "| $name | $v | ok |"
    else
        report "| $name | $v | **FAILED** (want $cond) |"
        fails=$((fails + 1))
    fi
}
check_stats() { # check_stats DB NAME...: each stat is 0 (or absent)
    local db=$1 st
    shift
    for st in "$@"; do
        check "stat $st" "SELECT COALESCE((SELECT value FROM stats WHERE name = '$st'), 0)" '$1 == 0' "$db"
    done
}
elapsed() { sed -n 's/.*elapsed_ms=\([0-9.]*\).*/\1/p' | tail -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
percent() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", (b / a - 1) * 100; else print "n/a" }'; }

: > "$out"
report "# GPU validation, $(date -u '+%Y-%m-%d %H:%M UTC')"
report ""
report '```'
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm --format=csv,noheader; } 2>&1 | tee -a "$out"
report "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo "${HPCPROF_COMMIT:-unknown}")"
report "kernel $(uname -r), $(nproc) CPUs"
report '```'

# 1. Build (CUDA, CUPTI, NVTX, NCCL all required here).
if [ "${PREBUILT:-0}" != 1 ]; then
    cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHPCPROF_WITH_CUPTI=ON \
        -DHPCPROF_WITH_NVTX=ON -DHPCPROF_WITH_NCCL=ON >"$logs/cmake.log" 2>&1 &&
        cmake --build "$build" -j "$(nproc)" --target hpcprof hpcprof_agent training_step \
            >"$logs/build.log" 2>&1 ||
        { tail -30 "$logs/build.log" "$logs/cmake.log"; report "build FAILED"; exit 1; }
fi
hp=$build/bin/hpcprof
ts=$build/samples/training_step
report ""
report "ldd of the agent (libcupti must NOT appear: it is dlopen'ed):"
report '```'
ldd "$build/lib/libhpcprof.so" | tee -a "$out"
report '```'

# 2. The training-step sample under hpcprof: trace checks.
"$hp" run -o "$work/step.hpcprof" -- "$ts" 5 >"$logs/step.out" 2>"$logs/step.err"
rc=$?
report ""
report "## training_step 5 under hpcprof (exit $rc)"
report ""
report '```'
tail -15 "$logs/step.err" | tee -a "$out"
report '```'
report ""
report "| check | value | result |"
report "|---|---|---|"
verdict "exit code" "$rc" '$1 == 0'
check "gemm kernels (3 a step + 2 in the graph's replays if recorded per node)" \
    "SELECT COUNT(*) FROM event_view WHERE category = 'gpu_kernel' AND name LIKE 'gemm%'" '$1 >= 15'
check "graph launches (GRAPH_TRACE)" "SELECT COUNT(*) FROM event_view WHERE name LIKE 'cuda_graph%'" '$1 == 3'
check "HtoD copies" "SELECT COUNT(*) FROM event_view WHERE name = 'memcpy HtoD'" '$1 >= 5'
check "DtoH copies" "SELECT COUNT(*) FROM event_view WHERE name = 'memcpy DtoH'" '$1 >= 5'
check "memsets" "SELECT COUNT(*) FROM event_view WHERE category = 'gpu_memset'" '$1 >= 5'
check "stream syncs on CPU threads" "SELECT COUNT(*) FROM event_view WHERE name = 'stream_synchronize' AND track_kind = 'cpu_thread'" '$1 >= 10'
check "device/context sync" "SELECT COUNT(*) FROM event_view WHERE name = 'context_synchronize'" '$1 >= 1'
check "GPU streams" "SELECT COUNT(*) FROM track WHERE kind = 'gpu_stream'" '$1 >= 2'
check "NVTX step ranges" "SELECT COUNT(*) FROM event_view WHERE category = 'nvtx' AND name LIKE 'step %'" '$1 == 5'
check "ncclAllReduce calls" "SELECT COUNT(*) FROM event_view WHERE name = 'ncclAllReduce'" '$1 == 5'
check "NCCL 1-rank communicator" "SELECT size FROM communicator WHERE kind = 'nccl'" '$1 == 1'
check "ncclAllReduce calls with correlated GPU work (informational: 1-rank NCCL may only copy)" \
    "SELECT COUNT(DISTINCT n.event_id) FROM event_view n JOIN event_view g ON g.correlation_id = n.correlation_id AND g.track_kind = 'gpu_stream' WHERE n.name = 'ncclAllReduce'" '$1 >= 0'
check "GPU records without their API call" \
    "SELECT COUNT(*) FROM event_view g WHERE g.track_kind = 'gpu_stream' AND g.correlation_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM event_view a WHERE a.category = 'cuda_api' AND a.correlation_id = g.correlation_id AND a.process_id = g.process_id)" '$1 == 0'
check "kernels outside the NVTX step that launched them" \
    "SELECT COUNT(*) FROM event_view k JOIN event_view a ON a.correlation_id = k.correlation_id AND a.category = 'cuda_api' JOIN event_view s ON s.track_id = a.track_id AND s.category = 'nvtx' AND s.name LIKE 'step %' AND a.ts_ns >= s.ts_ns AND a.ts_ns < s.ts_ns + s.dur_ns WHERE k.category IN ('gpu_kernel', 'gpu_memcpy', 'gpu_memset') AND (k.ts_ns < a.ts_ns OR k.ts_ns + k.dur_ns > s.ts_ns + s.dur_ns)" '$1 == 0'
check "kernels checked against their step" \
    "SELECT COUNT(*) FROM event_view k JOIN event_view a ON a.correlation_id = k.correlation_id AND a.category = 'cuda_api' JOIN event_view s ON s.track_id = a.track_id AND s.category = 'nvtx' AND s.name LIKE 'step %' AND a.ts_ns >= s.ts_ns AND a.ts_ns < s.ts_ns + s.dur_ns WHERE k.category = 'gpu_kernel'" '$1 >= 15'
# One clock: GPU work cannot start before the CPU call that submitted it, and cannot end after a
# context synchronisation that returned once it was done (10 us of slack either way).
with_call="event_view g JOIN event_view a ON a.correlation_id = g.correlation_id AND a.process_id = g.process_id AND a.category = 'cuda_api'"
check "GPU records starting over 10 us before their API call" \
    "SELECT COUNT(*) FROM $with_call WHERE g.track_kind = 'gpu_stream' AND g.ts_ns < a.ts_ns - 10000" '$1 == 0'
check "GPU records ending over 10 us after a later context sync returned" \
    "SELECT COUNT(*) FROM $with_call JOIN event_view c ON c.name = 'context_synchronize' AND c.process_id = g.process_id AND c.ts_ns > a.ts_ns + a.dur_ns WHERE g.track_kind = 'gpu_stream' AND g.ts_ns + g.dur_ns > c.ts_ns + c.dur_ns + 10000" '$1 == 0'
check_stats "$work/step.hpcprof" cupti_records_dropped records_dropped gpu_untimed_records cupti_unavailable gpu_unmatched_correlations
check "stat cupti_overhead_ns (informational)" "SELECT COALESCE((SELECT value FROM stats WHERE name = 'cupti_overhead_ns'), 0)" '$1 >= 0'
sql "$work/step.hpcprof" "SELECT group_concat(name || '=' || value, ' ') FROM stats WHERE value <> 0" >"$logs/step.stats"
report ""
report "Non-zero stats: $(cat "$logs/step.stats")"
report "Smallest launch-to-start latency of a kernel (ns): $(sql "$work/step.hpcprof" "SELECT MIN(g.ts_ns - a.ts_ns) FROM $with_call WHERE g.category = 'gpu_kernel'")"

# 3. Overhead: kernel-launch loop and training-like loop, 5 alternating runs each.
report ""
report "## Overhead (median of 5 alternating runs)"
report ""
report "| workload | without hpcprof (ms) | with hpcprof (ms) | slowdown (%) |"
report "|---|---|---|---|"
bench() { # bench NAME ARGS... (sets m0 and m1, the medians)
    local name=$1
    shift
    local a=() b=()
    for _ in 1 2 3 4 5; do
        a+=("$("$ts" "$@" 2>/dev/null | elapsed)")
        b+=("$("$hp" run -q --force -o "$work/b.hpcprof" -- "$ts" "$@" 2>>"$logs/bench.err" | elapsed)")
    done
    echo "$name: without ${a[*]}; with ${b[*]}" >>"$logs/bench.runs"
    m0=$(median "${a[@]}")
    m1=$(median "${b[@]}")
    report "| $name | $m0 | $m1 | $(percent "$m0" "$m1") |"
}
launches=100000
bench "kernel-launch loop ($launches empty kernels)" launch $launches
per_launch=$(awk -v a="$m0" -v b="$m1" -v n="$launches" 'BEGIN { printf "%.0f", (b - a) * 1e6 / n }')
bench "training-like loop (200 steps)" 200
training_slowdown=$(percent "$m0" "$m1")
report ""
report "Added cost per kernel launch: $per_launch ns."
report ""
report "| target | value | result |"
report "|---|---|---|"
verdict "training-like loop slowdown under 3 %" "$training_slowdown" '$1 < 3'

# 4. PyTorch: DDP over NCCL on one GPU, plain / under hpcprof / under torch.profiler.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    loop=$here/bench/gpu/torch_loop.py
    a=() b=() c=()
    for _ in 1 2 3; do
        a+=("$(python3 "$loop" plain "$torch_steps" --ddp 2>>"$logs/torch-plain.err" | elapsed)")
        b+=("$("$hp" run --force -o "$work/t.hpcprof" -- python3 "$loop" plain "$torch_steps" --ddp 2>"$logs/torch-hpcprof.err" | elapsed)")
        c+=("$(python3 "$loop" torchprof "$torch_steps" --ddp --trace "$work/torch.json" 2>>"$logs/torch-prof.err" | elapsed)")
    done
    echo "torch: plain ${a[*]}; hpcprof ${b[*]}; torch.profiler ${c[*]}" >>"$logs/bench.runs"
    m0=$(median "${a[@]}"); m1=$(median "${b[@]}"); m2=$(median "${c[@]}")
    report ""
    report "## PyTorch: a 4-layer MLP under DDP (NCCL, one GPU), $torch_steps steps (median of 3 alternating runs)"
    report ""
    report '```'
    tail -8 "$logs/torch-hpcprof.err" | tee -a "$out"
    report '```'
    report ""
    report "| run | elapsed (ms) | slowdown (%) |"
    report "|---|---|---|"
    report "| plain | $m0 | |"
    report "| under hpcprof run | $m1 | $(percent "$m0" "$m1") |"
    report "| under torch.profiler | $m2 | $(percent "$m0" "$m2") |"
    report ""
    report "| check | value | result |"
    report "|---|---|---|"
    verdict "hpcprof's slowdown (%) below torch.profiler's ($(percent "$m0" "$m2") %)" \
        "$(percent "$m0" "$m1")" "\$1 < $(percent "$m0" "$m2")"
    t=$work/t.hpcprof
    check "NVTX step ranges (timed steps)" "SELECT COUNT(*) FROM event_view WHERE category = 'nvtx' AND name LIKE 'step %' AND name <> 'step -1'" "\$1 == $torch_steps" "$t"
    check "ncclAllReduce calls (DDP's gradient buckets)" "SELECT COUNT(*) FROM event_view WHERE name = 'ncclAllReduce'" "\$1 >= $torch_steps" "$t"
    check_stats "$t" cupti_records_dropped records_dropped cupti_unavailable gpu_unmatched_correlations
    # Kernels (NCCL's included) launched inside the timed steps, against the PyTorch profiler's
    # trace of the same steps in another run.
    ours=$(sql "$t" "WITH api AS MATERIALIZED (SELECT correlation_id, process_id, track_id, ts_ns FROM event_view WHERE category = 'cuda_api' AND correlation_id IS NOT NULL), steps AS MATERIALIZED (SELECT track_id, ts_ns, dur_ns FROM event_view WHERE category = 'nvtx' AND name LIKE 'step %' AND name <> 'step -1'), k AS MATERIALIZED (SELECT correlation_id, process_id, dur_ns FROM event_view WHERE category IN ('gpu_kernel', 'gpu_comm_kernel')) SELECT COUNT(*), SUM(k.dur_ns) FROM k JOIN api a ON a.correlation_id = k.correlation_id AND a.process_id = k.process_id WHERE EXISTS (SELECT 1 FROM steps s WHERE s.track_id = a.track_id AND a.ts_ns >= s.ts_ns AND a.ts_ns < s.ts_ns + s.dur_ns)")
    "$hp" import -q --force -o "$work/torch.hpcprof" "$work/torch.json" >"$logs/import.log" 2>&1
    theirs=$(sql "$work/torch.hpcprof" "SELECT COUNT(*), SUM(dur_ns) FROM event_view WHERE category IN ('gpu_kernel', 'gpu_comm_kernel')")
    report ""
    report "Kernels in the timed steps (count|total ns): hpcprof $ours, torch.profiler $theirs."
    report ""
    verdict "kernel count, hpcprof minus torch.profiler" \
        "$(awk -v a="${ours%%|*}" -v b="${theirs%%|*}" 'BEGIN { print (a ~ /^[0-9]+$/ && b ~ /^[0-9]+$/) ? a - b : "n/a" }')" '$1 == 0'
    verdict "kernel time, hpcprof against torch.profiler (%)" \
        "$(percent "${theirs##*|}" "${ours##*|}")" '$1 > -10 && $1 < 10'
else
    report ""
    report "PyTorch with CUDA not importable: PyTorch comparison skipped."
fi
report ""
report "failed checks: $fails"
exit $((fails > 0))

#!/usr/bin/env bash
# GPU validation of hpcprof's CUDA/NVTX/NCCL capture, for a machine with an NVIDIA GPU (it was
# written on machines without one and has NOT been run yet; see docs/gpu-capture.md).
#
#   bench/gpu/validate.sh [BUILD_DIR] [OUT_MD]
#
# Builds everything, runs samples/cuda/training_step (and bench/gpu/torch_loop.py when PyTorch
# with CUDA is importable) under `hpcprof run`, checks the trace with SQL (kernels, copies,
# memsets, syncs, NVTX steps, NCCL calls present; every kernel inside the NVTX step that launched
# it; every GPU record correlated to its API call; nothing dropped), and measures the slowdown
# against an unprofiled run (kernel-launch loop, training-like loop) and against PyTorch's own
# profiler. Writes a markdown report (default docs/validation/gpu-<date>.md) and exits non-zero
# if any check failed. Budget: under 5 minutes on one GPU.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build-gpu-validate}
stamp=$(date -u +%Y%m%d-%H%M)
out=${2:-$here/docs/validation/gpu-$stamp.md}
mkdir -p "$(dirname "$out")"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
report() { echo "$*" | tee -a "$out"; }
check() { # check NAME SQL EXPECTATION(awk condition on $1)
    local name=$1 sql=$2 cond=$3 db=${4:-$work/step.hpcprof} v
    v=$(sqlite3 "$db" "$sql" 2>&1 | head -1)
    # Numbers only: an SQL error message must not pass a comparison as a string.
    if awk -v x="$v" "BEGIN { if (x !~ /^-?[0-9]+([.][0-9]+)?\$/) exit 1; \$1 = x + 0; exit !($cond) }"; then
        report "| $name | $v | ok |"
    else
        report "| $name | $v | **FAILED** (want $cond) |"
        fails=$((fails + 1))
    fi
}
elapsed() { sed -n 's/.*elapsed_ms=\([0-9.]*\).*/\1/p' | tail -1; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

: > "$out"
report "# GPU validation, $(date -u '+%Y-%m-%d %H:%M UTC')"
report ""
report '```'
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; } 2>&1 | tee -a "$out"
report "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null)"
report '```'

# 1. Build (CUDA, CUPTI, NVTX, NCCL all required here).
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHPCPROF_WITH_CUPTI=ON \
    -DHPCPROF_WITH_NVTX=ON -DHPCPROF_WITH_NCCL=ON -DHPCPROF_BUILD_TESTS=ON >"$work/cmake.log" 2>&1 \
    && cmake --build "$build" -j "$(nproc)" --target hpcprof hpcprof_agent training_step \
    >"$work/build.log" 2>&1 || { tail -30 "$work/build.log" "$work/cmake.log"; report "build FAILED"; exit 1; }
hp=$build/bin/hpcprof
ts=$build/samples/training_step
report ""
report "ldd of the agent (libcupti must NOT appear: it is dlopen'ed):"
report '```'
ldd "$build/lib/libhpcprof.so" | tee -a "$out"
report '```'

# 2. The training-step sample under hpcprof: trace checks.
"$hp" run -q -o "$work/step.hpcprof" -- "$ts" 5 >"$work/step.out" 2>"$work/step.err"
rc=$?
report ""
report "## training_step 5 under hpcprof (exit $rc)"
report ""
report "| check | value | result |"
report "|---|---|---|"
check "exit code" "SELECT $rc" '$1 == 0'
check "gemm kernels (3/step + 2 in the graph capture's replays if per-node)" \
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
for st in cupti_records_dropped records_dropped gpu_untimed_records cupti_unavailable gpu_unmatched_correlations; do
    check "stat $st" "SELECT value FROM stats WHERE name = '$st'" '$1 == 0'
done
check "stat cupti_overhead_ns (informational)" "SELECT value FROM stats WHERE name = 'cupti_overhead_ns'" '$1 >= 0'

# 3. Overhead: kernel-launch loop and training-like loop, 5 alternating runs each.
report ""
report "## Overhead (median of 5 alternating runs)"
report ""
report "| workload | without hpcprof (ms) | with hpcprof (ms) | slowdown |"
report "|---|---|---|---|"
bench() { # bench NAME ARGS...
    local name=$1
    shift
    local a=() b=()
    for _ in 1 2 3 4 5; do
        a+=("$("$ts" "$@" 2>/dev/null | elapsed)")
        b+=("$("$hp" run -q --force -o "$work/b.hpcprof" -- "$ts" "$@" 2>/dev/null | elapsed)")
    done
    local m0 m1
    m0=$(median "${a[@]}")
    m1=$(median "${b[@]}")
    report "| $name | $m0 | $m1 | $(awk -v a="$m0" -v b="$m1" 'BEGIN {printf "%.2f %%", (b / a - 1) * 100}') |"
}
bench "kernel-launch loop (100000 empty kernels)" launch 100000
bench "training-like loop (200 steps)" 200

# 4. PyTorch, when available.
if python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    loop=$here/bench/gpu/torch_loop.py
    a=() b=() c=()
    for _ in 1 2 3; do
        a+=("$(python3 "$loop" plain 50 2>/dev/null | elapsed)")
        b+=("$("$hp" run -q --force -o "$work/t.hpcprof" -- python3 "$loop" plain 50 2>/dev/null | elapsed)")
        c+=("$(python3 "$loop" torchprof 50 2>/dev/null | elapsed)")
    done
    m0=$(median "${a[@]}"); m1=$(median "${b[@]}"); m2=$(median "${c[@]}")
    report "| PyTorch MLP, 50 steps: hpcprof | $m0 | $m1 | $(awk -v a="$m0" -v b="$m1" 'BEGIN {printf "%.2f %%", (b / a - 1) * 100}') |"
    report "| PyTorch MLP, 50 steps: torch.profiler | $m0 | $m2 | $(awk -v a="$m0" -v b="$m2" 'BEGIN {printf "%.2f %%", (b / a - 1) * 100}') |"
    check "PyTorch: NVTX step ranges" "SELECT COUNT(*) FROM event_view WHERE category = 'nvtx' AND name LIKE 'step %'" '$1 >= 50' "$work/t.hpcprof"
    check "PyTorch: kernels" "SELECT COUNT(*) FROM event_view WHERE category = 'gpu_kernel'" '$1 >= 200' "$work/t.hpcprof"
    check "PyTorch: cupti_records_dropped" "SELECT value FROM stats WHERE name = 'cupti_records_dropped'" '$1 == 0' "$work/t.hpcprof"
else
    report ""
    report "PyTorch with CUDA not importable: PyTorch comparison skipped."
fi
report ""
report "failed checks: $fails"
exit $((fails > 0))

#!/usr/bin/env bash
# MPI overhead per call, side by side: REPS alternating runs of bench/mpi_overhead on RANKS ranks
# without and with hpcprof (agent + MPI module preloaded, recording), medians per loop of the
# wall time and of rank 0's thread CPU time per call.
#
#   bench/mpi/overhead.sh [BUILD_DIR] [REPS] [CALLS] [RANKS]
#   WARMUP=1000 bench/mpi/overhead.sh ...   warm-up calls before the loops (default 100,000)
#   EXTRA="-x HPCPROF_COUNTERS=none" ...    more mpirun options for the profiled side
set -euo pipefail
build=${1:-build}
reps=${2:-5}
calls=${3:-200000}
ranks=${4:-1}
warmup=${WARMUP:-100000}
read -r -a extra <<<"${EXTRA:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
bin=$build/bench/mpi_overhead
preload="$build/lib/libhpcprof.so:$build/lib/libhpcprof_mpi.so"
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
loops=(allreduce allreduce4 iprobe)
declare -A wall cpu
for ((i = 0; i < reps; i++)); do
    for side in 0 1; do
        rm -rf "${raw:?}"/*
        if [[ $side == 0 ]]; then
            out=$(mpirun -np "$ranks" "$bin" "$calls" "$warmup")
        else
            out=$(mpirun -np "$ranks" -x LD_PRELOAD="$preload" -x HPCPROF_RAW_DIR="$raw" "${extra[@]}" "$bin" "$calls" "$warmup")
        fi
        for l in "${loops[@]}"; do
            wall[$l,$side]+="$(awk -v l="$l" '$1 == l {print $2}' <<<"$out") "
            cpu[$l,$side]+="$(awk -v l="$l" '$1 == l {print $3}' <<<"$out") "
        done
    done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
echo "ranks $ranks, $calls calls per loop, $reps runs each way (ns per call, medians)"
for l in "${loops[@]}"; do
    # shellcheck disable=SC2086
    awk -v n="$l" -v a="$(median ${wall[$l,0]})" -v b="$(median ${wall[$l,1]})" \
        -v c="$(median ${cpu[$l,0]})" -v d="$(median ${cpu[$l,1]})" \
        'BEGIN {printf "%-10s wall %7.1f -> %7.1f (added %6.1f)   thread CPU %7.1f -> %7.1f (added %6.1f)\n", n, a, b, b - a, c, d, d - c}'
done

#!/usr/bin/env bash
# MPI overhead per call, side by side: REPS alternating runs of bench/mpi_overhead on RANKS ranks
# without and with hpcprof (agent + MPI module preloaded, recording), medians per loop.
#
#   bench/mpi/overhead.sh [BUILD_DIR] [REPS] [CALLS] [RANKS]
set -euo pipefail
build=${1:-build}
reps=${2:-5}
calls=${3:-200000}
ranks=${4:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
bin=$build/bench/mpi_overhead
preload="$build/lib/libhpcprof.so:$build/lib/libhpcprof_mpi.so"
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
declare -a a0 a1 p0 p1
for ((i = 0; i < reps; i++)); do
    out=$(mpirun -np "$ranks" "$bin" "$calls")
    a0+=("$(awk '/allreduce/ {print $2}' <<<"$out")"); p0+=("$(awk '/iprobe/ {print $2}' <<<"$out")")
    rm -rf "${raw:?}"/*
    out=$(mpirun -np "$ranks" -x LD_PRELOAD="$preload" -x HPCPROF_RAW_DIR="$raw" "$bin" "$calls")
    a1+=("$(awk '/allreduce/ {print $2}' <<<"$out")"); p1+=("$(awk '/iprobe/ {print $2}' <<<"$out")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
report() {
    local name=$1; shift
    local n=$(( $# / 2 ))
    local m0 m1
    m0=$(median "${@:1:n}"); m1=$(median "${@:n+1}")
    awk -v n="$name" -v a="$m0" -v b="$m1" 'BEGIN {printf "%-10s median without %7.1f ns, with %7.1f ns, added %6.1f ns per call\n", n, a, b, b - a}'
}
echo "ranks $ranks, $calls calls per loop, $reps runs each way"
report "allreduce" "${a0[@]}" "${a1[@]}"
report "iprobe" "${p0[@]}" "${p1[@]}"

#!/usr/bin/env bash
# Cost of the CPU counters on a latency-bound MPI phase (bench/counters/mpi_pingpong.c: random
# peers, one small message there and back per round), side by side in one run: the program
# alone, under `hpcprof run` with the default counters, and under `hpcprof run --counters none`;
# REPS alternating runs per rank count, medians of the phase's time (the slowest rank's).
# More ranks than cores (oversubscribed, Open MPI yields when idle) and fewer are both worth
# running: a counter thread that takes a core from a rank shows up at once in the first case.
#
#   bench/counters/mpi_overhead.sh [BUILD_DIR] [REPS] [ROUNDS] [RANKS...]     (defaults: build 7 20000 2 4 8)
#   OLD_BUILD=DIR adds a fourth column: the default counters of another build (old vs new).
set -euo pipefail
build=${1:-build}
reps=${2:-7}
rounds=${3:-20000}
shift $(($# < 3 ? $# : 3))
ranks_list=("$@")
((${#ranks_list[@]})) || ranks_list=(2 4 8)
bin=$build/bench/mpi_pingpong
[ -x "$bin" ] || { echo "mpi_overhead: $bin missing (built only with MPI)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

sides=(plain default none)
[ -n "${OLD_BUILD:-}" ] && sides+=(old_default)

# One run of side $1 on $2 ranks: prints the phase's seconds.
run_side() {
    local side=$1 ranks=$2 cmd=(mpirun -np "$ranks" "$bin" "$rounds")
    case $side in
    plain) "${cmd[@]}" ;;
    default) "$build/bin/hpcprof" run -q --force -o "$work/t.hpcprof" -- "${cmd[@]}" ;;
    none) "$build/bin/hpcprof" run -q --force --counters none -o "$work/t.hpcprof" -- "${cmd[@]}" ;;
    old_default) "$OLD_BUILD/bin/hpcprof" run -q --force -o "$work/t.hpcprof" -- "${cmd[@]}" ;;
    esac | awk '$1 == "pingpong" {print $2}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "mpi_pingpong $rounds rounds, $(nproc) cores, $reps alternating runs per column (median seconds of the phase)"
for ranks in "${ranks_list[@]}"; do
    declare -A times=()
    for ((i = 0; i < reps; i++)); do
        for side in "${sides[@]}"; do
            t=$(run_side "$side" "$ranks")
            [ -n "$t" ] || { echo "mpi_overhead: $side run on $ranks ranks failed" >&2; exit 1; }
            times[$side]+="$t "
        done
    done
    line=$(printf '%2d ranks:' "$ranks")
    # shellcheck disable=SC2086
    base=$(median ${times[plain]})
    line+=$(printf ' plain %.3f s' "$base")
    for side in "${sides[@]:1}"; do
        # shellcheck disable=SC2086
        m=$(median ${times[$side]})
        line+=$(awk -v s="$side" -v m="$m" -v b="$base" 'BEGIN {printf ", %s %.3f s (%+.1f %%)", s, m, (m / b - 1) * 100}')
    done
    echo "$line"
    for side in "${sides[@]}"; do echo "    $side: ${times[$side]}"; done
done

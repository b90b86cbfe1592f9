#!/usr/bin/env bash
# Cost of the CPU counters on a latency-bound MPI phase (bench/counters/mpi_pingpong.c: random
# peers, one small message there and back per round), side by side in one run: the program
# alone, under `hpcprof run` with the default counters, and under `hpcprof run --counters none`;
# REPS rounds of runs per rank count, in a new random order each round. Prints per side the
# median of the phase's time (the slowest rank's) and the median of the per-round ratios to the
# plain run and to --counters none (a round's runs are next to each other in time, so their
# ratio is less noisy than the ratio of medians on a shared machine). Run it with more ranks than cores
# (oversubscribed) and with fewer: a counter thread or a per-switch cost shows up at once in
# the first case.
#
#   bench/counters/mpi_overhead.sh [BUILD_DIR] [REPS] [ROUNDS] [RANKS...]   (build 9 50000 1 2 4 8)
#   (one rank exchanges with itself, a round ~40 times shorter: it runs 40 x ROUNDS)
#   MPIRUN_ARGS  placement (default: ranks bound round-robin to cores, the steadiest timing on a
#                shared machine; "--bind-to none" lets the scheduler move them)
#   OLD_BUILD=DIR  adds a column: the default counters of another build (old vs new)
set -euo pipefail
build=${1:-build}
reps=${2:-9}
rounds=${3:-50000}
shift $(($# < 3 ? $# : 3))
ranks_list=("$@")
((${#ranks_list[@]})) || ranks_list=(1 2 4 8)
bin=$build/bench/mpi_pingpong
[ -x "$bin" ] || { echo "mpi_overhead: $bin missing (built only with MPI)" >&2; exit 1; }
read -r -a placement <<<"${MPIRUN_ARGS:---bind-to core:overload-allowed --map-by core}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Traces go to memory (/dev/shm): the disk writeback of one run's trace must not land in the
# next run.
work=$(mktemp -d -p "$( [ -d /dev/shm ] && echo /dev/shm || echo "${TMPDIR:-/tmp}")")
trap 'rm -rf "$work"' EXIT

sides=(plain none default)
[ -n "${OLD_BUILD:-}" ] && sides+=(old_default)

# One run of side $1 on $2 ranks: prints the phase's seconds.
run_side() {
    local side=$1 ranks=$2 n=$rounds
    ((ranks == 1)) && n=$((rounds * 40))
    local cmd=(mpirun "${placement[@]}" -np "$ranks" "$bin" "$n")
    case $side in
    plain) "${cmd[@]}" ;;
    none) "$build/bin/hpcprof" run -q --force --counters none -o "$work/t.hpcprof" -- "${cmd[@]}" ;;
    default) "$build/bin/hpcprof" run -q --force -o "$work/t.hpcprof" -- "${cmd[@]}" ;;
    old_default) "$OLD_BUILD/bin/hpcprof" run -q --force -o "$work/t.hpcprof" -- "${cmd[@]}" ;;
    esac 2>/dev/null | awk '$1 == "pingpong" {print $2}'
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

echo "mpi_pingpong, $rounds rounds, $(nproc) cores, mpirun ${placement[*]}, $reps rounds of alternating runs"
for ranks in "${ranks_list[@]}"; do
    declare -A times=() vsPlain=() vsNone=()
    for ((i = 0; i < reps; i++)); do
        declare -A now=()
        # A new order every round: no side always follows the same other side.
        mapfile -t order < <(printf '%s\n' "${sides[@]}" | shuf)
        for side in "${order[@]}"; do
            t=$(run_side "$side" "$ranks")
            [ -n "$t" ] || { echo "mpi_overhead: $side run on $ranks ranks failed" >&2; exit 1; }
            now[$side]=$t
            times[$side]+="$t "
        done
        for side in "${sides[@]}"; do
            vsPlain[$side]+="$(awk -v a="${now[$side]}" -v b="${now[plain]}" 'BEGIN {print a / b}') "
            vsNone[$side]+="$(awk -v a="${now[$side]}" -v b="${now[none]}" 'BEGIN {print a / b}') "
        done
    done
    printf '%2d ranks  %-12s %8s  %-17s %s\n' "$ranks" side "median s" "vs plain (median)" "vs --counters none"
    for side in "${sides[@]}"; do
        # shellcheck disable=SC2086
        awk -v s="$side" -v m="$(median ${times[$side]})" -v p="$(median ${vsPlain[$side]})" \
            -v n="$(median ${vsNone[$side]})" \
            'BEGIN {printf "          %-12s %8.3f  %+16.1f%%  %+16.1f%%\n", s, m, (p - 1) * 100, (n - 1) * 100}'
    done
    for side in "${sides[@]}"; do echo "          $side: ${times[$side]}"; done
done

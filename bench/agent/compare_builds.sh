#!/usr/bin/env bash
# Agent cost per call of two builds side by side (e.g. main's and a branch's): REPS alternating
# runs of the pwrite loop (an I/O hook) and of the MPI loops (bench/mpi_overhead, one rank:
# allreduce, allreduce4, iprobe; waitall2, waitsends16 and waitmiddle6 per iteration, see mpi_overhead.c)
# without the agent, with BASE's agent and with NEW's; medians and minima of the calling thread's CPU time
# per call (robust on a shared machine). The programs are PROGRAMS's (default BASE; they do not
# depend on the agent); a loop the programs do not have prints nothing.
#
#   bench/agent/compare_builds.sh BASE_BUILD NEW_BUILD [REPS] [CALLS]
#   PROGRAMS=NEW_BUILD bench/agent/compare_builds.sh ...   NEW's programs (a loop BASE lacks)
set -euo pipefail
base=$1
new=$2
reps=${3:-7}
calls=${4:-1000000}
programs=${PROGRAMS:-$base}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
declare -A t
pwrite() { # side: none | base | new
    rm -rf "${raw:?}"/*
    if [[ $1 == none ]]; then "$programs/bench/pwrite_loop" "$calls" | awk '{print $2}'; return; fi
    local b=$base; [[ $1 == new ]] && b=$new
    env HPCPROF_RAW_DIR="$raw" HPCPROF_THREAD_BUFFER_MB=512 LD_PRELOAD="$b/lib/libhpcprof.so" \
        "$programs/bench/pwrite_loop" "$calls" | awk '{print $2}'
}
mpi() {
    rm -rf "${raw:?}"/*
    if [[ $1 == none ]]; then mpirun -np 1 "$programs/bench/mpi_overhead" "$calls"; return; fi
    local b=$base; [[ $1 == new ]] && b=$new
    mpirun -np 1 -x LD_PRELOAD="$b/lib/libhpcprof.so:$b/lib/libhpcprof_mpi.so" \
        -x HPCPROF_RAW_DIR="$raw" -x HPCPROF_THREAD_BUFFER_MB=512 "$programs/bench/mpi_overhead" "$calls"
}
for ((i = 0; i < reps; i++)); do
    for side in none base new; do
        t[pwrite,$side]+="$(pwrite $side) "
        out=$(mpi $side)
        for l in allreduce allreduce4 iprobe waitall2 waitsends16 waitmiddle6; do
            t[$l,$side]+="$(awk -v l="$l" '$1 == l {print $3}' <<<"$out") "
        done
    done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { printf '%s\n' "$@" | sort -g | head -1; }
# Medians, then minima (the least disturbed run of each side: steadier than the median when the
# machine's load changes during the runs).
for stat in median minimum; do
    label=medians
    [[ $stat == minimum ]] && label=minima
    echo "$reps runs each, $calls calls per loop; thread CPU ns per call, $label (added by the agent)"
    for l in pwrite allreduce allreduce4 iprobe waitall2 waitsends16 waitmiddle6; do
        [[ -n ${t[$l,none]// /} ]] || continue
        # shellcheck disable=SC2086
        awk -v n="$l" -v a="$($stat ${t[$l,none]})" -v b="$($stat ${t[$l,base]})" -v c="$($stat ${t[$l,new]})" \
            'BEGIN {printf "%-11s without %7.1f   base %7.1f (+%5.1f)   new %7.1f (+%5.1f)   new - base %+5.1f\n", n, a, b, b - a, c, c - a, c - b}'
    done
done

#!/usr/bin/env bash
# Whole-run slowdown of a real MPI application under `hpcprof run`: MUMPS's example solver
# (Debian's mumps-test, /usr/lib/mumps/dsimpletest) factorising and solving the 7-point Laplacian
# on an N^3 grid, on RANKS ranks. REPS runs without and with hpcprof, alternating; prints the
# medians of (a) the whole command's wall time (with hpcprof: including writing the trace) and
# (b) the solver's own elapsed time (the sum of its "Elapsed time in ... driver" lines).
#
#   [HPCPROF_ARGS="--counters none"] bench/mpi/app_slowdown.sh [BUILD_DIR] [REPS] [N] [RANKS]
set -euo pipefail
build=${1:-build}
reps=${2:-5}
n=${3:-30}
ranks=${4:-2}
here=$(cd "$(dirname "$0")" && pwd)
solver=/usr/lib/mumps/dsimpletest
[ -x "$solver" ] || { echo "app_slowdown: $solver missing (apt-get install mumps-test)" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$here/laplacian_input.py" "$n" > "$work/input"

# Runs the solver (optionally under hpcprof); prints "WALL SOLVER" seconds.
run_once() {
    local t0 t1
    t0=$(date +%s.%N)
    "$@" mpirun -np "$ranks" "$solver" < "$work/input" > "$work/out" 2> "$work/err"
    t1=$(date +%s.%N)
    local solver_s
    solver_s=$(awk '/Elapsed time in (analysis|factorization|solve) driver/ {s += $NF} END {print s}' "$work/out")
    grep -q "Solution is" "$work/out" || { echo "app_slowdown: the solver failed" >&2; cat "$work/err" >&2; exit 1; }
    awk -v a="$t0" -v b="$t1" -v s="$solver_s" 'BEGIN {printf "%.3f %.3f\n", b - a, s}'
}

plain_wall=() plain_solver=() prof_wall=() prof_solver=()
for ((i = 0; i < reps; i++)); do
    read -r w s < <(run_once)
    plain_wall+=("$w") plain_solver+=("$s")
    read -r w s < <(run_once "$build/bin/hpcprof" run -q --force ${HPCPROF_ARGS:-} -o "$work/t.hpcprof" --)
    prof_wall+=("$w") prof_solver+=("$s")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
events=$(sqlite3 "$work/t.hpcprof" "SELECT COUNT(*) FROM event" 2>/dev/null || echo "?")
echo "MUMPS dsimpletest, Laplacian ${n}^3, ${ranks} ranks, ${reps} runs each; last trace: ${events} events"
echo "wall   without: ${plain_wall[*]}"
echo "wall   with:    ${prof_wall[*]}"
echo "solver without: ${plain_solver[*]}"
echo "solver with:    ${prof_solver[*]}"
mw0=$(median "${plain_wall[@]}") mw1=$(median "${prof_wall[@]}")
ms0=$(median "${plain_solver[@]}") ms1=$(median "${prof_solver[@]}")
awk -v a="$mw0" -v b="$mw1" -v c="$ms0" -v d="$ms1" 'BEGIN {
    printf "median wall %.3f s -> %.3f s (%+.2f %%); solver time %.3f s -> %.3f s (%+.2f %%)\n",
        a, b, (b / a - 1) * 100, c, d, (d / c - 1) * 100 }'

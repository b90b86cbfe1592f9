#!/usr/bin/env bash
# The first thing a new user sees (`scripts/setup.sh demo`): a real multi-rank MPI job profiled,
# its report, and what to do next. The trace stays in the current folder; the ranks' checkpoint
# files go to a temporary folder that is removed.
#
#   scripts/demo.sh [BUILD_DIR]      (default: build/ of this checkout)
#
# Environment: DEMO_TRACE (default hpcprof-demo.hpcprof; replaced when it exists).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build_dir=$(cd "${1:-$here/build}" && pwd)
trace=${DEMO_TRACE:-hpcprof-demo.hpcprof}
hpcprof=$build_dir/bin/hpcprof
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

# Open MPI refuses to run as root and more ranks than cores unless told: a fresh machine (a
# container, a CI runner, a 2-core VM) is often both.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1

echo "demo: hpcprof run -o $trace -- mpirun -np 4 mpi_demo   (samples/mpi/mpi_demo.c: rank 3 computes 3x as long, every rank writes a checkpoint in 4 KiB synchronous writes)" >&2
"$hpcprof" run --force -o "$trace" -- mpirun -np 4 "$build_dir/samples/mpi_demo" "$data"
echo
"$hpcprof" report "$trace"
cat <<NEXT

The trace is $trace (one SQLite file: sqlite3 $trace "SELECT * FROM event_view LIMIT 5"). Next:
  $hpcprof view $trace                            # every rank's timeline in hpcprof-gui
  $hpcprof report $trace --format html -o hpcprof-demo.html
NEXT

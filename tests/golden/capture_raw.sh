#!/usr/bin/env bash
# Captures the raw data of the bundled samples for the report golden test
# (tests/golden/report_golden_test.cpp): each sample runs once under `hpcprof run --keep-raw`
# and its raw folder is packed into tests/golden/raw/NAME.tar.gz. The test converts and
# analyses these fixed captures, so every report number is reproducible; the raw formats stay
# readable by later versions, so a capture stays valid when the agent changes.
#
#   tests/golden/capture_raw.sh [BUILD_DIR]     (then scripts/update_golden.sh)
# Run it only to add a sample or when a capture must show new data: the expected reports then
# change, and the diff shows how.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$here/build}" && pwd)
out=$here/tests/golden/raw
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
hpcprof=$build/bin/hpcprof
samples=$build/samples

capture() { # NAME [ENV=VALUE ...] -- CMD ...
    local name=$1
    shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    # A sample may exit non-zero on purpose (nvtx_sample returns its argument).
    (cd "$work" && env "${envs[@]}" "$hpcprof" run -q --keep-raw -o "$name.hpcprof" -- "$@" >/dev/null) || true
    [ -d "$work/$name.hpcprof.raw" ] || { echo "no raw data for $name" >&2; exit 1; }
    tar -czf "$out/$name.tar.gz" -C "$work" --exclude=.hpcprof-run --sort=name --owner=0 --group=0 \
        --numeric-owner --mtime=@0 "$name.hpcprof.raw"
    echo "captured $name: $(du -h "$out/$name.tar.gz" | cut -f1)" >&2
}

mpirun=(mpirun --allow-run-as-root --oversubscribe)
capture io_sample HPCPROF_NONE=1 -- "$samples/io_sample" "$work"
capture repeat_sample HPCPROF_NONE=1 -- "$samples/repeat_sample" "$work" 20000
capture socket_sample HPCPROF_NONE=1 -- "$samples/socket_sample"
capture mpi_sample HPCPROF_NONE=1 -- "${mpirun[@]}" -np 4 "$samples/mpi_sample"
capture mpi_halo HPCPROF_NONE=1 -- "${mpirun[@]}" -np 3 "$samples/mpi_halo"
capture nvtx_sample HPCPROF_NONE=1 -- "$samples/nvtx_sample" 7
capture nccl_ranks HPCPROF_NONE=1 -- "$samples/nccl_ranks" 3
capture rdma_stream STAND_IN_VERBS_DELAY_US=100 HPCPROF_RDMA_EVENT_RATE=1000 -- "$samples/rdma_sample" stream
capture omp_imbalance OMP_NUM_THREADS=2 -- "$samples/omp_imbalance" 5 10

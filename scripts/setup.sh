#!/usr/bin/env bash
# Sets up hpcprof on a fresh Debian bookworm machine: installs the Debian packages it needs
# (idempotent: only what is missing), configures and builds, then optionally runs the demo or
# the whole test suite.
#
#   scripts/setup.sh          install dependencies and build (build/)
#   scripts/setup.sh demo     ... then profile the bundled MPI sample (4 ranks, one of them
#                             overloaded, a checkpoint in small synchronous writes), print its
#                             report and keep the trace (./hpcprof-demo.hpcprof)
#   scripts/setup.sh test     ... then run the full test suite (ctest)
#
# Environment: BUILD_DIR (default build), JOBS (default: number of cores), CMAKE_ARGS (extra).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${BUILD_DIR:-$here/build}
jobs=${JOBS:-$(nproc)}
mode=${1:-build}

packages=(
    build-essential cmake pkg-config git
    libsqlite3-dev sqlite3 zlib1g-dev libzstd-dev zstd libsimdjson-dev
    libfmt-dev libcli11-dev nlohmann-json3-dev catch2
    openmpi-bin libopenmpi-dev gfortran python3-mpi4py mumps-test
    chromium python3-jsonschema
    python3-pytest python3-pandas python3-matplotlib
    help2man
    qt6-base-dev fonts-dejavu-core
    libpapi-dev papi-tools libsde1
    libibverbs-dev
    clang libomp-dev
)

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo_cmd=()
    [ "$(id -u)" -ne 0 ] && sudo_cmd=(sudo)
    "${sudo_cmd[@]}" apt-get update -qq
    DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# shellcheck disable=SC2086
cmake -S "$here" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${CMAKE_ARGS:-} >&2
cmake --build "$build_dir" -j "$jobs" >&2

case "$mode" in
build) ;;
demo)
    "$here/scripts/demo.sh" "$build_dir"
    ;;
test)
    cd "$build_dir"
    ctest --output-on-failure -j "$jobs" --timeout 300
    ;;
*)
    echo "usage: $0 [build|demo|test]" >&2
    exit 2
    ;;
esac

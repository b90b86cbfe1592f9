#!/usr/bin/env bash
# Runs bench/gpu/validate.sh on a GPU machine that has CUDA, PyTorch and NCCL but not the Debian
# libraries hpcprof's build links (SQLite, fmt, zstd, ...): the build comes along in a bundle
# made by bench/gpu/bundle.sh on the build machine, and only the libraries this machine lacks are
# taken from the bundle (a library that is here stays this machine's own, so the profiled
# programs load what they always load).
#
#   bench/gpu/device_run.sh [BUNDLE] [OUT_DIR]      (defaults: .gpu, $OUT or /tmp/gpu-validation)
#
# Writes OUT_DIR/gpu-validation.md (validate.sh's report) and OUT_DIR/logs/.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bundle=$(cd "${1:-$here/.gpu}" && pwd)
out=${2:-${OUT:-/tmp/gpu-validation}}
mkdir -p "$out/logs"
env_log=$out/logs/environment.txt

# CUPTI and NCCL as this machine has them: PyTorch's wheels first (what torch itself loads), then
# the CUDA toolkit.
find_lib() {
    find /opt /usr/local /usr/lib -name "$1" \( -type f -o -type l \) 2>/dev/null |
        awk '/site-packages/ { print 0, $0; next } { print 1, $0 }' | sort -k1,1n -s | head -1 | cut -d' ' -f2-
}
cupti=$(find_lib 'libcupti.so.13')
nccl=$(find_lib 'libnccl.so.2')
lib_path=
for lib in "$cupti" "$nccl"; do
    [ -n "$lib" ] && lib_path=${lib_path:+$lib_path:}$(dirname "$lib")
done

# Libraries the bundle's programs need and this machine lacks, linked one by one into missing/;
# repeated because a supplied library can need another.
missing=$bundle/missing
rm -rf "$missing" && mkdir -p "$missing"
programs=("$bundle/build/bin/hpcprof" "$bundle/build/lib/libhpcprof.so" "$bundle/build/samples/training_step")
for _ in 1 2 3 4; do
    absent=$(LD_LIBRARY_PATH=$missing${lib_path:+:$lib_path} ldd "${programs[@]}" "$missing"/* 2>/dev/null |
        awk '/not found/ { print $1 }' | sort -u)
    [ -z "$absent" ] && break
    for lib in $absent; do
        if [ -e "$bundle/syslib/$lib" ]; then
            ln -sf "$bundle/syslib/$lib" "$missing/$lib"
        else
            echo "device_run: $lib is needed and neither here nor in the bundle" >&2
        fi
    done
done
export LD_LIBRARY_PATH=$missing${lib_path:+:$lib_path}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

{
    echo "libcupti: ${cupti:-none found}"
    echo "libnccl: ${nccl:-none found}"
    echo "taken from the bundle: $(ls "$missing" | tr '\n' ' ')"
    echo "python3: $(command -v python3) $(python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1)"
    echo "sqlite3 command: $(command -v sqlite3 || echo 'none (Python sqlite3 used)')"
    ldd "${programs[@]}" 2>&1
} >"$env_log"
head -5 "$env_log"

PREBUILT=1 LOG_DIR=$out/logs HPCPROF_COMMIT=$(cat "$bundle/COMMIT" 2>/dev/null) \
    timeout "${VALIDATE_TIMEOUT:-480}" bash "$here/bench/gpu/validate.sh" "$bundle/build" "$out/gpu-validation.md"
rc=$?
echo "device_run: validate.sh exit $rc"
exit $rc

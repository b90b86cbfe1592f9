#!/usr/bin/env bash
# Packs what bench/gpu/device_run.sh needs on a GPU machine without hpcprof's build
# dependencies: the hpcprof command, the agent and the CUDA sample from BUILD_DIR (configured
# with CUPTI, NVTX and NCCL), stripped, plus every shared library they load here except the C
# runtime's own (device_run.sh uses one of these only where that machine lacks it).
#
#   bench/gpu/bundle.sh BUILD_DIR [BUNDLE]          (default bundle: .gpu, ignored by git)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
bundle=${2:-$here/.gpu}
rm -rf "$bundle"
mkdir -p "$bundle/build/bin" "$bundle/build/lib" "$bundle/build/samples" "$bundle/syslib"
cp "$build/bin/hpcprof" "$bundle/build/bin/"
cp "$build/lib/libhpcprof.so" "$bundle/build/lib/"
cp "$build/samples/training_step" "$bundle/build/samples/"
strip --strip-unneeded "$bundle"/build/bin/* "$bundle"/build/lib/* "$bundle"/build/samples/*
# The C runtime (glibc's libraries, the loader, libgcc and libstdc++) is the GPU machine's own:
# a newer one runs what was built against an older one, not the other way round. CUDA's
# libraries come from that machine too (its driver, its CUPTI and NCCL).
ldd "$bundle"/build/bin/* "$bundle"/build/lib/* "$bundle"/build/samples/* |
    awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
    grep -Ev '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+|ld-linux[^/]*|libcuda|libcupti|libnccl|libcudart)\.so' |
    while read -r lib; do cp -L "$lib" "$bundle/syslib/"; done
git -C "$here" rev-parse --short HEAD >"$bundle/COMMIT"
du -sh "$bundle"

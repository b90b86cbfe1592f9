// SPDX-License-Identifier: MIT
// Agent entry: starts the recorder when libhpcprof.so is loaded (LD_PRELOAD) and exports the
// small C API that lets other tools and tests talk to it.
#include "collector/runtime/recorder.hpp"
#include "interpose/common/real_function.hpp"

namespace {
__attribute__((constructor(101))) void startAgent() { hpcprof::collector::ensureStarted(); }
} // namespace

/// 1 when this process is being recorded, 0 otherwise.
HPCPROF_HOOK int hpcprof_is_recording() {
    return hpcprof::collector::recording(hpcprof::collector::SourceBit::Io) ? 1 : 0;
}

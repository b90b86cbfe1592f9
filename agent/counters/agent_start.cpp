// SPDX-License-Identifier: MIT
// Starts the counters source in the agent, right after the recorder (libhpcprof.so only).
#include <cstring>

#include "runtime/recorder.hpp"
#include "sampler.hpp"

namespace {
__attribute__((constructor(102))) void startCounters() {
    using namespace hpcprof::agent;
    if (!recording(SourceBit::Counters)) return;
    counters::SamplerOptions o = counters::optionsFromEnvironment();
    if (std::strcmp(o.list, "none") == 0) return;
    counters::startSampler(o);
}
} // namespace

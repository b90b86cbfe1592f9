// SPDX-License-Identifier: MIT
// Agent entry: starts the recorder when libhpcprof.so is loaded (LD_PRELOAD) and exports the
// small C API that lets other tools and tests talk to it.
#include "common/real_function.hpp"
#include "counters/sampler.hpp"
#include "runtime/agent_abi.hpp"
#include "runtime/recorder.hpp"

namespace {
__attribute__((constructor(101))) void startAgent() { hpcprof::agent::ensureStarted(); }
} // namespace

/// 1 when this process is being recorded, 0 otherwise.
HPCPROF_HOOK int hpcprof_is_recording() {
    return hpcprof::agent::recording(hpcprof::agent::SourceBit::Io) ? 1 : 0;
}

// ---- capture-module interface (agent/runtime/agent_abi.hpp) --------------------------------

HPCPROF_HOOK int hpcprof_agent_recording(uint32_t sourceBit) {
    return hpcprof::agent::recording(hpcprof::agent::SourceBit(sourceBit)) ? 1 : 0;
}

HPCPROF_HOOK uint64_t hpcprof_agent_now(void) { return hpcprof::agent::now(); }

HPCPROF_HOOK const hpcprof_agent_hot_fields* hpcprof_agent_hot(void) {
    namespace detail = hpcprof::agent::detail;
    static const hpcprof_agent_hot_fields fields{
        &detail::g_state, &detail::g_sources, &detail::g_useTsc, &detail::g_clockSkewTicks,
        hpcprof::agent::counters::boundaryGapTicksAddress()};
    return &fields;
}

HPCPROF_HOOK hpcprof::schema::raw::EventRecord* hpcprof_agent_reserve(void) {
    return hpcprof::agent::reserveEvent();
}

HPCPROF_HOOK void hpcprof_agent_append(const void* record) {
    hpcprof::agent::appendRecord(record);
}

HPCPROF_HOOK hpcprof::schema::raw::InFlightCall* hpcprof_agent_inflight_line(void) {
    return hpcprof::agent::inFlightLine();
}

HPCPROF_HOOK uint32_t hpcprof_agent_intern(const char* text, size_t length) {
    return hpcprof::agent::internString(text, length);
}

HPCPROF_HOOK void hpcprof_agent_set_rank(int rank, int worldSize, const char* source) {
    hpcprof::agent::setRank(rank, worldSize, source);
}

HPCPROF_HOOK void hpcprof_agent_mark_end(uint32_t endState, int exitCode) {
    hpcprof::agent::markEnd(hpcprof::schema::raw::EndState(endState), exitCode);
}

HPCPROF_HOOK int64_t hpcprof_agent_local_ns(void) { return hpcprof::agent::localNs(); }

HPCPROF_HOOK void hpcprof_agent_clock_sync(int which, int64_t localNs, int64_t offsetNs,
                                           int64_t rttNs) {
    hpcprof::agent::recordClockSync(which, localNs, offsetNs, rttNs);
}

// SPDX-License-Identifier: MIT
// Linux perf_event software counters (task clock, context switches, CPU migrations, page
// faults) opened per thread with perf_event_open and read as one group with a single read().
// Works without a hardware PMU. Without CAP_PERFMON and with perf_event_paranoid >= 2 only user
// space can be counted, and the kernel-side events then always read 0: they are refused here
// with that reason, so the plan falls back to getrusage for them.
//
// An event attached to a thread costs that thread at every context switch (the kernel switches
// the event's context with it): about 0.3-0.6 us per switch measured here (bench/counters),
// which doubles a latency-bound MPI phase on shared cores. No counter of the default lists is
// taken from here; cpu_migrations and the events a user names are.
#pragma once

#include "backend.hpp"

namespace hpcprof::agent::counters {

class PerfBackend final : public CounterListBackend<kMaxPerfEvents> {
public:
    const char* name() const override { return "perf_sw"; }
    schema::raw::CounterSource source() const override { return schema::raw::CounterSource::PerfSw; }
    Offer offer(const char* counter) override;
    void attach(ThreadSlot& t, int tid) override;
    void detach(ThreadSlot& t) override;
    void read(ThreadSlot& t, uint64_t* values) override;

private:
    bool probe(int config, bool excludeKernel, int& err);
    bool m_excludeKernel = false;
};

} // namespace hpcprof::agent::counters

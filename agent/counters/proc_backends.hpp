// SPDX-License-Identifier: MIT
// Backends that need no permission at all: getrusage(RUSAGE_THREAD) for the calling thread and
// the same kernel counters from /proc/self/task/<tid>/{stat,status} for the sampler thread, and
// /proc/self/task/<tid>/schedstat (time on CPU and time waiting on a run queue, ns).
//
// getrusage gives user/system time in us; /proc/<tid>/stat gives them in clock ticks (10 ms), so
// user_time/system_time/task_clock from this backend are coarse on timer samples.
#pragma once

#include "backend.hpp"

namespace hpcprof::agent::counters {

class RusageBackend final : public CounterListBackend<kMaxCounters> {
public:
    const char* name() const override { return "rusage"; }
    schema::raw::CounterSource source() const override { return schema::raw::CounterSource::Rusage; }
    Offer offer(const char* counter) override;
    void attach(ThreadSlot& t, int tid) override;
    void detach(ThreadSlot& t) override;
    void read(ThreadSlot& t, bool self, uint64_t* values) override;
};

class SchedstatBackend final : public CounterListBackend<2> {
public:
    const char* name() const override { return "schedstat"; }
    schema::raw::CounterSource source() const override { return schema::raw::CounterSource::Schedstat; }
    Offer offer(const char* counter) override;
    void attach(ThreadSlot& t, int tid) override;
    void detach(ThreadSlot& t) override;
    void read(ThreadSlot& t, bool self, uint64_t* values) override;
};

/// Parses the decimal number after `key` in `text` (e.g. "nonvoluntary_ctxt_switches:");
/// false if absent. Async-signal-safe.
bool findNumberAfter(const char* text, const char* key, uint64_t& out);
/// The n-th (1-based) space-separated field of /proc/<tid>/stat contents, counting after the
/// ")" that ends the command name. Async-signal-safe.
bool statField(const char* text, int field, uint64_t& out);
/// The thread's time on a CPU so far (first field of /proc/<tid>/schedstat, ns), read through
/// an open descriptor; false if it cannot be read. Async-signal-safe.
bool readSchedRuntime(int schedFd, uint64_t& runtimeNs);

} // namespace hpcprof::agent::counters

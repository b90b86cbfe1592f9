// SPDX-License-Identifier: MIT
// Backends that need no permission at all: getrusage(RUSAGE_THREAD) for the calling thread and
// the same kernel counters from /proc/self/task/<tid>/{stat,status} for the sampler thread; and
// the thread's CPU clock (clock_gettime, time on CPU in ns, the first field of schedstat) with
// /proc/self/task/<tid>/schedstat for the time spent waiting on a run queue.
//
// Only the CPU clock and getrusage need no descriptor: the other threads of a program read
// those at region boundaries; the /proc files are held by the sampler thread (backend.hpp).
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
    void add(const Offer& offer, uint8_t slot) override;
    void attach(ThreadSlot& t, int tid) override;
    void detach(ThreadSlot& t) override;
    void read(ThreadSlot& t, uint64_t* values) override;
    void readUnattached(int tid, bool self, bool mayOpenFiles, uint64_t* values) override;
    bool costlyToRead() const override { return true; } // /proc/<tid>/stat and status: ~8 us

private:
    bool m_needsStat = false;   ///< faults, user and system time: /proc/<tid>/stat
    bool m_needsStatus = false; ///< context switches: /proc/<tid>/status
};

/// task_clock from the thread's CPU clock (any thread, no descriptor), cpu_wait from
/// /proc/<tid>/schedstat.
class SchedstatBackend final : public CounterListBackend<2> {
public:
    const char* name() const override { return "schedstat"; }
    schema::raw::CounterSource source() const override { return schema::raw::CounterSource::Schedstat; }
    Offer offer(const char* counter) override;
    void add(const Offer& offer, uint8_t slot) override;
    void attach(ThreadSlot& t, int tid) override;
    void detach(ThreadSlot& t) override;
    void read(ThreadSlot& t, uint64_t* values) override;
    void readUnattached(int tid, bool self, bool mayOpenFiles, uint64_t* values) override;

private:
    void fill(uint64_t cpuNs, bool cpuOk, uint64_t waitNs, bool waitOk, uint64_t* values) const;
    bool m_wantsWait = false;
};

/// Parses the decimal number after `key` in `text` (e.g. "nonvoluntary_ctxt_switches:");
/// false if absent. Async-signal-safe.
bool findNumberAfter(const char* text, const char* key, uint64_t& out);
/// The n-th (1-based) space-separated field of /proc/<tid>/stat contents, counting after the
/// ")" that ends the command name. Async-signal-safe.
bool statField(const char* text, int field, uint64_t& out);
/// Time on a CPU so far of thread `tid` of this process (ns; `self`: the calling thread), from
/// its CPU clock: no descriptor. False once the thread is gone. Async-signal-safe.
bool threadCpuNs(int tid, bool self, uint64_t& ns);

} // namespace hpcprof::agent::counters

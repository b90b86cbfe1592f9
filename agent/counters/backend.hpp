// SPDX-License-Identifier: MIT
// The counter backend interface. A backend probes which counters it can count on this machine
// (and says why not for the others), opens per-thread resources when a thread is first seen and
// reads a thread's running totals into the value slots it was given.
//
// Thread-safety: probe/add/attach/detach run under the sampler's registry lock. read() runs on
// the sampled thread itself (self = true, region boundaries) or on the sampler thread (timer);
// one ThreadSlot is never read by two threads at once (ThreadSlot::busy).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::agent::counters {

constexpr int kMaxCounters = 24;
constexpr int kMaxPerfEvents = 8;
constexpr int kReasonSize = 200;

/// Per-thread resources of every backend (fixed storage: no allocation after start-up).
struct ThreadSlot {
    std::atomic<int32_t> tid{0};  ///< 0 = free
    std::atomic<uint8_t> state{0}; ///< 0 free, 1 live, 2 ended
    std::atomic<bool> busy{false}; ///< being read (self or sampler)
    bool seen = false;             ///< sampler scan mark
    int perfFds[kMaxPerfEvents] = {};
    int perfCount = 0;
    int schedFd = -1;
    int statFd = -1;
    int statusFd = -1;
    int papiSet = -1;
    uint64_t timerRuntimeNs = ~0ull; ///< CPU time at the last timer sample (sampler thread only)
};

/// What a backend answers for one requested counter.
struct Offer {
    bool ok = false;
    int code = 0;                    ///< backend-specific id of the counter
    schema::raw::CounterUnit unit = schema::raw::CounterUnit::Count;
    bool processWide = false;        ///< one value per process (samples with tid 0)
    char reason[kReasonSize] = {};   ///< why not (empty: the backend does not know the name)
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual const char* name() const = 0;
    virtual schema::raw::CounterSource source() const = 0;
    /// Can `counter` be counted here? Not thread-safe (start-up).
    virtual Offer offer(const char* counter) = 0;
    /// Uses an offered counter; its values go to `slot`.
    virtual void add(const Offer& offer, uint8_t slot) = 0;
    /// True when add() was called at least once.
    virtual bool used() const = 0;
    /// Opens per-thread resources for `tid` (a thread of this process).
    virtual void attach(ThreadSlot& t, int tid) = 0;
    /// Closes them (after the last read).
    virtual void detach(ThreadSlot& t) = 0;
    /// Writes the thread's running totals into values[slot] (kCounterMissing when unreadable).
    /// self: the calling thread is `t`. Async-signal-safe for the non-PAPI backends.
    virtual void read(ThreadSlot& t, bool self, uint64_t* values) = 0;
    /// Process-wide counters (tid 0); false when the backend has none.
    virtual bool readProcess(uint64_t* /*values*/) { return false; }
};

/// A backend whose used counters are a short list of (backend code, value slot) pairs, filled by
/// add() in plan order (perf_event, rusage, schedstat).
template <int Capacity> class CounterListBackend : public Backend {
public:
    void add(const Offer& offer, uint8_t slot) override {
        m_codes[m_count] = offer.code;
        m_slots[m_count] = slot;
        ++m_count;
    }
    bool used() const override { return m_count > 0; }

protected:
    int m_codes[Capacity] = {};
    uint8_t m_slots[Capacity] = {};
    int m_count = 0;
};

/// Copies `text` into a reason buffer (truncating).
void setReason(char* reason, const char* text);
/// Appends `text` to a reason buffer (truncating).
void appendReason(char* reason, const char* text);
/// Appends a decimal number.
void appendNumber(char* reason, long long v);

} // namespace hpcprof::agent::counters

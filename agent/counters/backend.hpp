// SPDX-License-Identifier: MIT
// The counter backend interface. A backend probes which counters it can count on this machine
// (and says why not for the others), opens per-thread resources when the sampler first sees a
// thread, and reads a thread's running totals into the value slots it was given.
//
// Descriptors: per-thread resources (perf_event groups, /proc/<tid>/... files, PAPI event
// sets) are opened, read and closed by the sampler thread alone, in its own descriptor table
// (sampler.cpp): the program can neither see nor close nor replace them, and they take none of
// its descriptor numbers. Any other thread reads only what needs no descriptor
// (readUnattached): its own getrusage(RUSAGE_THREAD), any thread's CPU clock.
//
// Thread-safety: probe/add run at start-up; attach/detach/read on the sampler thread only;
// readUnattached on any thread, async-signal-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::agent::counters {

constexpr int kMaxCounters = 24;
constexpr int kMaxPerfEvents = 8;
constexpr int kReasonSize = 200;

/// Per-thread resources of every backend (fixed storage: no allocation after start-up). Only
/// the sampler thread touches the descriptors; tid and state are read by the exit path too.
struct ThreadSlot {
    std::atomic<int32_t> tid{0};  ///< 0 = free
    std::atomic<uint8_t> state{0}; ///< 0 free, 1 live, 2 ended, 3 being claimed
    bool seen = false;             ///< sampler scan mark
    bool attached = false;         ///< attach() ran (in the sampler's own descriptor table)
    bool startComplete = false;    ///< its Start sample (taken before the sampler saw it) has every value
    int perfFds[kMaxPerfEvents] = {};
    int perfCount = 0;
    int schedFd = -1;
    int statFd = -1;
    int statusFd = -1;
    int papiSet = -1;
    uint64_t timerRuntimeNs = ~0ull; ///< CPU time at the last timer sample
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
    /// Opens per-thread resources for `tid` (a thread of this process). Sampler thread only.
    virtual void attach(ThreadSlot& t, int tid) = 0;
    /// Closes them (after the last read). Sampler thread only.
    virtual void detach(ThreadSlot& t) = 0;
    /// Writes the thread's running totals into values[slot] (kCounterMissing when unreadable),
    /// through the resources attach() opened. Sampler thread only.
    virtual void read(ThreadSlot& t, uint64_t* values) = 0;
    /// The same without per-thread resources, on any thread: what needs no descriptor, for the
    /// calling thread (`self`: tid is the caller) or another thread of the process. With
    /// `mayOpenFiles` (the process has a single thread, so a descriptor opened and closed
    /// within this call cannot meet one of the program's) a /proc file may be read too.
    /// Leaves values it cannot read untouched. Async-signal-safe.
    virtual void readUnattached(int /*tid*/, bool /*self*/, bool /*mayOpenFiles*/, uint64_t* /*values*/) {}
    /// True when read() parses text the kernel formats for it (/proc/<tid>/status): the timer
    /// then reads it every few periods only.
    virtual bool costlyToRead() const { return false; }
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

// SPDX-License-Identifier: MIT
// The counters family's records: counter definitions and samples.
#pragma once

#include "hpcprof/schema/raw/common.hpp"

namespace hpcprof::schema::raw {
// ---------------------------------------------------------------------------------------------
// Counter section: CPU counters (agent/counters), converted by families/counters/counter_records.
// ---------------------------------------------------------------------------------------------
//
// A process's counter set is described once by CounterDefRecords (written by the counters sampler
// thread at start): counter `nameId` is value slot `slot` of every sample, or is unavailable with
// `reasonId`. A sample of one thread (`tid`; 0 = process-wide counters such as PAPI SDEs) at one
// instant spans ceil(n / 6) CounterRecords with the same ts, each carrying slots
// [first, first + count). Samples are written by the thread itself at region boundaries and by
// the sampler thread on its timer, so a thread's samples may sit in two thread files.

/// Where a counter's values come from.
enum class CounterSource : uint8_t {
    None = 0,      ///< unavailable (CounterDefRecord::reasonId says why)
    Papi = 1,      ///< PAPI preset, native or software-defined event
    PerfSw = 2,    ///< perf_event_open software counter
    Rusage = 3,    ///< getrusage(RUSAGE_THREAD) / /proc/<tid>/stat|status
    Schedstat = 4, ///< /proc/<tid>/schedstat (on-CPU time, run-queue wait)
    Test = 5,      ///< a test-only source
};

enum class CounterUnit : uint8_t { Count = 0, Ns = 1 };

/// Why a sample was taken.
enum class CounterTrigger : uint8_t {
    Timer = 1,  ///< the sampler's period
    Enter = 2,  ///< entry of an MPI / I/O call (region boundary)
    Exit = 3,   ///< exit of that call
    Start = 4,  ///< the thread was first seen
    End = 5,    ///< the thread or process ended (last value)
};

constexpr uint8_t kNoCounterSlot = 255;
constexpr uint64_t kCounterMissing = ~0ull; ///< a value that could not be read in this sample
constexpr uint32_t kCounterProcessWide = 0x01; ///< CounterDef flag: samples carry tid 0
constexpr uint32_t kCounterFallback = 0x02;    ///< CounterDef flag: not the first-choice source

struct CounterDefRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    CounterSource source;
    uint8_t slot;    ///< value index in samples, kNoCounterSlot when unavailable
    CounterUnit unit;
    uint32_t nameId;   ///< string id of the counter name (task_clock, PAPI_TOT_INS, ...)
    uint32_t reasonId; ///< string id of why it is unavailable or degraded, 0 = none
    uint32_t flags;    ///< kCounterProcessWide, kCounterFallback
    int32_t onlineCpus;   ///< CPUs online on this host
    int32_t affinityCpus; ///< CPUs this process may run on
    uint64_t periodNs;    ///< timer sampling period, 0 = no timer
    uint8_t reserved[32];
};

struct CounterRecord {
    RecordKind kind; ///< stored last: __atomic_store_n(&r->kind, ..., __ATOMIC_RELEASE)
    CounterTrigger trigger;
    uint8_t first; ///< slot of values[0]
    uint8_t count; ///< values used (1..6)
    int32_t tid;   ///< sampled thread, 0 = process-wide
    uint64_t ts;   ///< raw ticks
    uint64_t values[6]; ///< running totals; kCounterMissing = not read this time
};

constexpr uint32_t kCounterValuesPerRecord = 6;
static_assert(sizeof(CounterDefRecord) == kRecordSize && sizeof(CounterRecord) == kRecordSize);
static_assert(std::is_trivially_copyable_v<CounterDefRecord> &&
              std::is_trivially_copyable_v<CounterRecord>);
static_assert(offsetof(CounterDefRecord, kind) == 0 && offsetof(CounterRecord, kind) == 0);

} // namespace hpcprof::schema::raw

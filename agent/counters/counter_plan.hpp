// SPDX-License-Identifier: MIT
// Which counters a process counts and where each comes from. Every requested counter is offered
// to the backends in order (PAPI, perf_event software counters, schedstat, getrusage); the
// first that can count it gets a value slot. A counter nobody can count is kept with the
// reasons each backend gave, so the trace says what is missing and why.
#pragma once

#include <cstdint>

#include "backend.hpp"

namespace hpcprof::agent::counters {

/// The default list: hardware counters through PAPI where the machine has them (and the host
/// has no more ranks than CPUs: each costs every context switch of a counted thread), then software
/// counters that need no descriptor in the program's threads (the CPU clock, getrusage) or one
/// only the sampler thread holds (schedstat). "A|B" means A, or B when A cannot be counted.
/// cpu_migrations is left out: only a perf_event attached to each thread counts it, which costs
/// every context switch of the thread (docs/counters.md).
inline constexpr const char* kDefaultCounters =
    "PAPI_TOT_INS,PAPI_TOT_CYC,PAPI_L3_TCM|PAPI_L2_TCM,PAPI_BR_MSP,"
    "task_clock,cpu_wait,context_switches,voluntary_context_switches,"
    "involuntary_context_switches,page_faults";
/// The software part of the default list ("software").
inline constexpr const char* kSoftwareCounters =
    "task_clock,cpu_wait,context_switches,voluntary_context_switches,"
    "involuntary_context_switches,page_faults";

struct PlannedCounter {
    char name[64] = {};
    schema::raw::CounterSource source = schema::raw::CounterSource::None;
    schema::raw::CounterUnit unit = schema::raw::CounterUnit::Count;
    uint8_t slot = schema::raw::kNoCounterSlot;
    uint32_t flags = 0;            ///< kCounterProcessWide, kCounterFallback
    char reason[kReasonSize] = {}; ///< why unavailable, or why the first choice was not used
    bool refusedInGroup = false;   ///< left out of a group by groupPapiRefusal (a name overrides it)
};

struct CounterPlan {
    PlannedCounter counters[kMaxCounters];
    int count = 0;
    int slots = 0; ///< value slots in use
};

/// True for names only PAPI can count (PAPI_*, component::event, sde:::...).
bool isPapiEventName(const char* name);

/// True when `list` ("default", "software", "none" or names) asks for a PAPI event (not counting
/// a group's PAPI events when `groupPapiRefused`).
bool wantsPapi(const char* list, bool groupPapiRefused = false);

/// Builds the plan for `list` over `backends` (in order of preference; nullptr entries are
/// skipped). `papiWhyNot` is the reason given for PAPI events when no PAPI backend exists.
/// With `groupPapiRefusal`, the PAPI events a group brings (default) are not offered and are
/// kept as unavailable with that reason; PAPI events named in the list still are.
/// Allocation-free.
void buildPlan(const char* list, Backend* const* backends, int backendCount, const char* papiWhyNot,
               CounterPlan& plan, const char* groupPapiRefusal = nullptr);

} // namespace hpcprof::agent::counters

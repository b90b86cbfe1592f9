// SPDX-License-Identifier: MIT
// Which counters a process counts and where each comes from. Every requested counter is offered
// to the backends in order (PAPI, perf_event software counters, schedstat, getrusage); the
// first that can count it gets a value slot. A counter nobody can count is kept with the
// reasons each backend gave, so the trace says what is missing and why.
#pragma once

#include <cstdint>

#include "backend.hpp"

namespace hpcprof::agent::counters {

/// The default list: hardware counters through PAPI where the machine has them, then the
/// software counters every Linux machine has. "A|B" means A, or B when A cannot be counted.
inline constexpr const char* kDefaultCounters =
    "PAPI_TOT_INS,PAPI_TOT_CYC,PAPI_L3_TCM|PAPI_L2_TCM,PAPI_BR_MSP,"
    "task_clock,cpu_wait,context_switches,voluntary_context_switches,"
    "involuntary_context_switches,cpu_migrations,page_faults";
/// The software part of the default list ("software").
inline constexpr const char* kSoftwareCounters =
    "task_clock,cpu_wait,context_switches,voluntary_context_switches,"
    "involuntary_context_switches,cpu_migrations,page_faults";

struct PlannedCounter {
    char name[64] = {};
    schema::raw::CounterSource source = schema::raw::CounterSource::None;
    schema::raw::CounterUnit unit = schema::raw::CounterUnit::Count;
    uint8_t slot = schema::raw::kNoCounterSlot;
    uint32_t flags = 0;            ///< kCounterProcessWide, kCounterFallback
    char reason[kReasonSize] = {}; ///< why unavailable, or why the first choice was not used
};

struct CounterPlan {
    PlannedCounter counters[kMaxCounters];
    int count = 0;
    int slots = 0; ///< value slots in use
};

/// True for names only PAPI can count (PAPI_*, component::event, sde:::...).
bool isPapiEventName(const char* name);

/// True when `list` ("default", "software", "none" or names) asks for a PAPI event.
bool wantsPapi(const char* list);

/// Builds the plan for `list` over `backends` (in order of preference; nullptr entries are
/// skipped). `papiWhyNot` is the reason given for PAPI events when no PAPI backend exists.
/// Allocation-free.
void buildPlan(const char* list, Backend* const* backends, int backendCount, const char* papiWhyNot,
               CounterPlan& plan);

} // namespace hpcprof::agent::counters

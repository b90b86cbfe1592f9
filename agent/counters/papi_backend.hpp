// SPDX-License-Identifier: MIT
// PAPI backend: presets (PAPI_TOT_INS, ...), native events (perf::TASK-CLOCK, ...) and
// software-defined events (sde:::Lib::counter). libpapi is dlopen'ed only when a PAPI event is
// requested, so processes without counters never load it. Per-thread events are counted by one
// event set per thread attached to it (PAPI_attach, third-party monitoring), made and read by
// the sampler thread only, so their perf_event descriptors live in its own descriptor table;
// SDEs are process-wide and read on the thread that loaded PAPI (at exit). An application that
// initialised PAPI itself keeps its library state: it is reused and never shut down here.
#pragma once

#include <memory>

#include "backend.hpp"

namespace hpcprof::agent::counters {

/// The PAPI backend, or nullptr when hpcprof was built without PAPI (the reason is set).
std::unique_ptr<Backend> makePapiBackend(char* whyNot);

/// True for names the PAPI backend is asked about (PAPI_*, component::event, sde:::...).
bool isPapiEventName(const char* name);

} // namespace hpcprof::agent::counters

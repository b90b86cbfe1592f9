// SPDX-License-Identifier: MIT
// Writes a generated job straight into a trace (the store's TraceWriter), as a conversion of its
// raw capture would: one process, thread and CPU track per rank, the world communicator.
#pragma once

#include <string>

#include "hpcprof/status.hpp"
#include "job_model.hpp"

namespace hpcprof::bench::jobgen {

/// Writes the job `spec` into a new trace at `path`; returns the events written.
Result<int64_t> writeTrace(const JobSpec& spec, const std::string& path);

} // namespace hpcprof::bench::jobgen

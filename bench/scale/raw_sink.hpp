// SPDX-License-Identifier: MIT
// Writes a generated job as the agent's raw capture (docs/raw-format.md): one process folder per
// rank with its process.bin and one thread file of 64-byte records, so `hpcprof merge` (the
// store's conversion) can be measured on it.
#pragma once

#include <filesystem>

#include "hpcprof/status.hpp"
#include "job_model.hpp"

namespace hpcprof::bench::jobgen {

/// Writes the job `spec` into the raw directory `dir` (created); returns the event records written.
Result<int64_t> writeRaw(const JobSpec& spec, const std::filesystem::path& dir);

} // namespace hpcprof::bench::jobgen

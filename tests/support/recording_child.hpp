// SPDX-License-Identifier: MIT
// Test support for the in-process recorder (agent/runtime). The recorder is a process-wide
// singleton configured once from the environment, so each scenario runs in a forked child that
// configures and starts its own recorder, runs the scenario, ends the recording and exits; the
// test then reads the child's thread file back with the store's reader.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "store/raw_reader.hpp"

namespace hpcprof::test {

/// Environment variables the child sets before it starts its recorder (name, value).
using RecorderSettings = std::vector<std::pair<std::string, std::string>>;

/// Runs `body` in a forked child whose recorder records into `rawDir` (HPCPROF_SOURCES=all,
/// HPCPROF_COUNTERS=none, then `settings`), ends the recording as a normal exit, and returns the
/// records of the child's thread file. Requires that the child exited with 0 and left one
/// process with one thread file, read back without torn records or unreadable files.
store::ThreadRecords recordInChild(const std::string& rawDir, const RecorderSettings& settings,
                                   const std::function<void()>& body);

} // namespace hpcprof::test

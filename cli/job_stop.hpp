// SPDX-License-Identifier: MIT
// `hpcprof run --timeout DURATION` and SIGUSR1: ending a job that outlives its time, so that the
// trace (with the calls every rank was inside, read from the raw headers after the kill) and the
// hang diagnosis are written before hpcprof exits.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace hpcprof::cli {

/// "90", "90s", "1500ms", "5m", "2h" -> ms; nullopt when not a duration. 0 = no time limit.
std::optional<int64_t> parseDuration(const std::string& text);

/// Installs the SIGUSR1 handler that asks for the job to be stopped (only with --timeout).
void installStopSignal();

/// Waits for `child` like waitpid(), but ends the job when `timeoutMs` (> 0) passes or SIGUSR1
/// arrives: SIGTERM to the command and to every live process of the job found in `rawDir` (this
/// host's process folders that never reached an exit path; the launcher's process group does
/// not matter), then SIGKILL to what is left after a grace period. `stoppedRealtimeNs` is set to
/// when the job was ended (0 = it ended by itself). Returns the wait status.
int waitOrStop(pid_t child, int64_t timeoutMs, const std::filesystem::path& rawDir,
               int64_t& stoppedRealtimeNs);

} // namespace hpcprof::cli

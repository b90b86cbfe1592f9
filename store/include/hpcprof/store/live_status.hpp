// SPDX-License-Identifier: MIT
// A snapshot of a capture while it is written (`hpcprof status`): for each process of a raw
// folder, the call each of its threads is inside right now (raw format 6 in-flight lines), its
// last completed call, the events it recorded and what it could not record. Read-only: files
// are mapped read-only and no lock is taken, so the running job is not disturbed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::store {

struct LiveCall {
    int32_t tid = 0;
    std::string name;         ///< the function
    std::string communicator; ///< key, empty = none
    std::optional<int64_t> instance;
    std::optional<int64_t> peer;
    std::optional<int64_t> tag;
    std::string object;       ///< file path, empty = none
    std::optional<int64_t> requestedBytes;
    std::optional<int64_t> requests; ///< MPI_Wait*: the requests waited on (peer, tag: the first's)
    int64_t sinceRealtimeNs = 0; ///< entry, realtime ns
    /// Not a call: the thread polls a completion queue that gave nothing since `sinceRealtimeNs`
    /// (its first empty poll; raw kInFlightPolling).
    bool polling = false;
};

struct LiveProcess {
    int32_t pid = 0;
    std::optional<int64_t> rank;
    std::string host;
    bool ended = false;          ///< reached an exit path (exited, exec, MPI_Abort)
    std::vector<LiveCall> calls; ///< one per thread inside a recorded call, oldest entry first
    std::string lastCall;        ///< the latest-ending completed call, empty = none yet
    int64_t lastCallEndRealtimeNs = 0;
    int64_t lastProgressRealtimeNs = 0; ///< latest of the last call's end and the calls' entries
    int64_t events = 0;          ///< calls recorded so far
    int64_t dropped = 0;         ///< records it could not record
    int64_t tornLines = 0;       ///< in-flight lines caught half-written on every attempt
};

/// The processes of `rawDir`, by rank (non-rank processes after, by pid).
Result<std::vector<LiveProcess>> readLiveStatus(const std::filesystem::path& rawDir);

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
// What the shard merge knows of each shard before copying rows: its node, ranks and metadata,
// and where its ts 0 lands on the merged trace's time base (shards.hpp, "Clocks").
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::store {

struct ShardInfo {
    std::filesystem::path file;
    std::map<std::string, std::string> meta;
    std::string node, host;
    std::optional<int64_t> originMono, rank0Offset;
    int64_t originRealtime = 0;
    int64_t nodesExpected = 0, worldSize = 0;
    std::set<int64_t> ranks;
    struct Process {
        int64_t id, startTs;
        std::optional<int64_t> parent;
    };
    std::vector<Process> processes; ///< in id order
    // Placement, set by placeShards.
    int64_t shift = 0;              ///< ns added to the shard's times
    std::string clockMethod;        ///< for its processes that were "monotonic" in the shard
};

/// Reads a shard's metadata, ranks and event count (read-only).
Result<ShardInfo> readShardInfo(const std::filesystem::path& file);

/// Sets each shard's shift and clock method, and sorts them oldest first; returns the merged
/// trace's time origin (realtime ns) and clock method.
struct Placement {
    int64_t originRealtime = 0;
    std::string clockMethod;
};
Placement placeShards(std::vector<ShardInfo>& shards);

} // namespace hpcprof::store

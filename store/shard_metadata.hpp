// SPDX-License-Identifier: MIT
// The merged trace's metadata: the base shard's rows with the clock placement, the sums and the
// counters summary over every shard, the shard rows dropped, and what is missing (nodes and
// ranks the shards' expected counts name but no shard holds).
#pragma once

#include <sqlite3.h>

#include <vector>

#include "hpcprof/status.hpp"
#include "hpcprof/store/shards.hpp"
#include "shard_placement.hpp"

namespace hpcprof::store {

/// Writes the metadata rows into `db` (the trace being merged); fills `result`'s missing nodes,
/// ranks and partial flag.
Status writeMergedMetadata(sqlite3* db, const std::vector<ShardInfo>& shards,
                           const Placement& placement, ShardMergeResult& result);

/// The counters summaries (metadata `counters`) of several conversions as one: processes summed
/// per counter and reason, hosts listed once.
std::string mergeCountersSummaries(const std::vector<std::string>& docs);

} // namespace hpcprof::store

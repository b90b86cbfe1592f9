// SPDX-License-Identifier: MIT
// Per-node shards (issue 22): in the per-rank launch form each node converts its own ranks' raw
// data into a shard, a trace of the same schema holding that node's processes, plus a few
// metadata rows that say which node it is and where its clock stands. The last node to finish
// merges the shards into the one trace with SQL (ATTACH, then INSERT ... SELECT per table with
// the ids offset and the times shifted onto one time base); no raw data is decoded again.
//
// Clocks: a shard's ts 0 is its earliest process's start on that node's monotonic clock. The
// merge places every shard against the reference shard (the one holding rank 0, else the
// first): same host -> the monotonic clock (exact); another host whose ranks measured their
// offset to rank 0 (MPI ping-pong) -> that offset; otherwise -> the realtime clock at each
// shard's origin. A constant shift per shard: the drift the single-process conversion corrects
// between the two MPI measurements is not applied (docs/user-guide.md, "Running on a cluster").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"
#include "hpcprof/store/merge.hpp"

namespace hpcprof::store {

/// Metadata keys of shards and of traces merged from shards.
namespace shard_meta {
inline constexpr const char* kNode = "shard_node";                 ///< node name (node3, host)
inline constexpr const char* kHost = "shard_host";                 ///< the node's host name
inline constexpr const char* kNodesExpected = "shard_nodes_expected"; ///< nodes of the job, "" unknown
inline constexpr const char* kWorldSize = "shard_world_size";      ///< ranks of the job, "" unknown
inline constexpr const char* kRanks = "shard_ranks";               ///< "4,5": world ranks converted here
inline constexpr const char* kOriginMonotonicNs = "shard_origin_monotonic_ns";
inline constexpr const char* kRank0OffsetNs = "shard_rank0_offset_ns"; ///< host clock minus rank 0's, "" unknown
inline constexpr const char* kWarnings = "shard_warnings"; ///< the node's conversion warnings, JSON list
/// Traces merged from shards.
inline constexpr const char* kNodesMerged = "nodes_merged";   ///< "node0,node1,..."
inline constexpr const char* kNodesMissing = "nodes_missing"; ///< "node2" or "1 node (names unknown)"
inline constexpr const char* kRanksMissing = "ranks_missing"; ///< "4,5"
} // namespace shard_meta

/// Who a shard belongs to: the node and what the job looked like from there.
struct ShardIdentity {
    std::string node;          ///< e.g. node3 (SLURM_NODEID 3) or the host name
    int64_t nodesExpected = 0; ///< 0 = unknown
    int64_t worldSize = 0;     ///< 0 = unknown
};

/// Converts `options.rawDir` (one node's process folders) into the shard `options.output` with
/// the converter as it is, then adds the shard's metadata rows (its warnings among them: the
/// merge says them once for all nodes).
Result<MergeResult> convertShard(const MergeOptions& options, const ShardIdentity& identity);

struct ShardMergeOptions {
    std::vector<std::filesystem::path> shards;
    std::filesystem::path output;
    bool force = false;
    /// Shards attached at once (the merge is then one transaction); more are attached one at a
    /// time. 0: SQLite's limit (10). Tests set 1 to take the one-at-a-time path.
    int attachAtOnce = 0;
    /// Event rows written below SQL (shard_pages.hpp); false: copied with INSERT ... SELECT like
    /// the other tables (tests compare the two).
    bool pageCopy = true;
    /// Threads that rewrite and pack the event rows written below SQL (0: the machine's cores);
    /// the trace is the same file whatever their number.
    int threads = 0;
};

struct ShardMergeResult {
    int64_t shards = 0;
    int64_t processes = 0;
    int64_t events = 0;
    bool partial = false;
    std::vector<std::string> missingNodes; ///< names, or one "N nodes" line when unknown
    std::vector<int64_t> missingRanks;
    /// The shards' conversion warnings, each once: "TEXT (N nodes)" when several nodes gave it.
    std::vector<std::string> warnings;
    bool pageCopied = false;      ///< the event rows were written below SQL
    std::string pageCopyFallback; ///< why they were not, when pageCopy asked for it
};

/// Merges shards into one trace (written to a temporary file, renamed into place when
/// complete). Missing nodes and ranks (from the shards' expected counts) make the trace partial
/// and are named in its metadata.
Result<ShardMergeResult> mergeShards(const ShardMergeOptions& options);

/// The shard files of a shards folder (shard-*.hpcprof), sorted by name.
std::vector<std::filesystem::path> listShards(const std::filesystem::path& folder);

} // namespace hpcprof::store

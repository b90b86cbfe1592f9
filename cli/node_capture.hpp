// SPDX-License-Identifier: MIT
// The end of a per-rank wrapper when its node layout is known (node_layout.hpp). Coordination
// goes through files only: node-local markers between the ranks of one node, and the shards
// folder <output>.shards/<job id>/ between nodes.
//
//   1. each wrapper leaves <local>/done-<rank>; the one that completes the node's set and wins
//      mkdir <local>/converting converts the node's raw data into a shard on the node (the
//      converter as it is), next to the raw data;
//   2. it copies the shard to <output>.shards/<job>/.shard-X.hpcprof.part and renames it to
//      shard-X.hpcprof (the rename is the node's "done" marker: a shard is there whole or not at
//      all), then deletes the node's raw data (kept with --keep-raw);
//   3. it takes the first free ticket, mkdir <output>.shards/<job>/arrived-<i> (atomic on the
//      file server even where directory listings are cached); the node with ticket <nodes> is
//      the last: it merges the shards into the trace and removes <output>.shards.
//
// A job on one node converts straight into the trace (no shard). A node that never delivers its
// shard leaves the set incomplete: `hpcprof merge <output>.shards/<job> -o T` makes the
// partial trace, whose metadata names the missing nodes and ranks.
#pragma once

#include <cstdint>
#include <string>

#include "node_layout.hpp"
#include "raw_dir_claim.hpp"

namespace hpcprof::cli {

struct NodeRun {
    const RankLaunch& rank;
    const NodeLayout& node;
    std::string output;
    std::string command;
    uint64_t tscHz = 0;
    bool force = false;
    bool keepRaw = false;
    bool quiet = false;
};

enum class NodeOutcome {
    RankDone,     ///< another rank of this node converts
    ShardWritten, ///< this node's shard is delivered; another node merges
    TraceWritten, ///< this wrapper wrote the trace
    Failed,       ///< conversion or merge failed (said how to redo it by hand)
    NodeLost,     ///< simulated node failure: no shard, and the wrapper exits as its command did
};

/// Marks this rank done and does whatever falls to it (see above). `claim`: the shared claim of
/// <output>.shards, released (and the folder removed) once the trace is written.
NodeOutcome finishOnNode(const NodeRun& run, RawDirClaim& claim);

} // namespace hpcprof::cli

// SPDX-License-Identifier: MIT
#include "node_capture.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "hpcprof/store/merge.hpp"
#include "hpcprof/store/shards.hpp"
#include "messages.hpp"
#include "progress.hpp"

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {

/// Node-local: leaves `folder`/done-<rank>; true when this wrapper completes the set of
/// `expected` markers and wins the atomic mkdir of `folder`/converting (several may see the full
/// set at once).
bool lastRankOfNode(const fs::path& folder, int rank, int expected) {
    int fd = ::open((folder / ("done-" + std::to_string(rank))).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    if (fd >= 0) ::close(fd);
    int done = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(folder, ec))
        if (e.path().filename().string().rfind("done-", 0) == 0) ++done;
    return done >= expected && ::mkdir((folder / "converting").c_str(), 0755) == 0;
}

/// Shared folder: once its shard is in place, a node takes the first free ticket
/// (mkdir arrived-1, arrived-2, ...: atomic on the file server, where a directory listing may be
/// cached on a network file system); the node that takes ticket `nodes` is the last to arrive.
bool lastNodeToArrive(const fs::path& folder, int nodes) {
    for (int i = 1; i <= nodes; ++i)
        if (::mkdir((folder / ("arrived-" + std::to_string(i))).c_str(), 0755) == 0) return i == nodes;
    return false;
}

/// The shards of the folder, waiting up to a minute for a listing that shows them all (a
/// network file system's cached listing may lag behind the renames the tickets vouch for).
std::vector<fs::path> allShards(const fs::path& folder, int nodes) {
    std::vector<fs::path> shards = store::listShards(folder);
    for (int wait = 0; int(shards.size()) < nodes && wait < 120; ++wait) {
        ::usleep(500'000);
        shards = store::listShards(folder);
    }
    return shards;
}

std::string mergeHint(const NodeRun& r) {
    return fmt::format("hpcprof merge {} -o {}", r.node.shardsDir.string(), r.output);
}

/// The node's raw data, once converted: deleted (with its job folder when it was the last node
/// on this machine), or kept with --keep-raw.
void dropLocalRaw(const NodeRun& r) {
    if (r.keepRaw) return;
    std::error_code ec;
    fs::remove_all(r.node.localDir, ec);
    fs::remove(r.node.localDir.parent_path(), ec); // only when empty
}

/// HPCPROF_SIM_FAIL_NODE=<node> (simulated nodes only): that node's converter stops as a node
/// lost before delivering its shard would, for tests of the partial trace.
bool simulatedFailure(const NodeRun& r) {
    const char* fail = std::getenv("HPCPROF_SIM_FAIL_NODE");
    return r.node.simulated && fail && r.node.node == fail;
}

/// Converts the node's raw data on the node: into the trace (a one-node job) or into a local
/// shard. False after saying how to redo it by hand.
bool convertHere(const NodeRun& r, const fs::path& output, bool shard) {
    store::MergeOptions mo;
    mo.rawDir = r.node.localDir;
    mo.output = output;
    mo.force = r.force || shard;
    mo.fallbackTscHz = r.tscHz;
    mo.command = r.command;
    Progress progress("converting " + r.node.node);
    mo.onProgress = [&progress](const char* step, int64_t done, int64_t total) {
        progress.update(step, done, total);
    };
    store::ShardIdentity id{r.node.node, r.node.nodeCount, r.rank.worldSize};
    auto done = shard ? store::convertShard(mo, id) : store::mergeRawDirectory(mo);
    progress.finish();
    if (!done) {
        printMessage("run", fmt::format("{}: {}; raw data kept in {} (convert by hand: hpcprof "
                                        "merge {} --node {} -o {}/shard-{}.hpcprof, then {})",
                                        r.node.node, done.status().message(), r.node.localDir.string(),
                                        r.node.localDir.string(), r.node.node, r.node.shardsDir.string(),
                                        r.node.node, mergeHint(r)));
        return false;
    }
    // A shard keeps its warnings; the merge says them once for all nodes (the same one from
    // every node would otherwise be printed once per node).
    if (!shard)
        for (const auto& w : done->warnings) fmt::print(stderr, "hpcprof: warning: {}\n", w);
    return true;
}

/// Copies the local shard into the shards folder under a hidden name, then renames it into
/// place: the other nodes only ever see a whole shard.
bool publishShard(const NodeRun& r, const fs::path& local) {
    const fs::path part = r.node.shardsDir / fmt::format(".shard-{}.hpcprof.part", r.node.node);
    const fs::path final = r.node.shardsDir / fmt::format("shard-{}.hpcprof", r.node.node);
    std::error_code ec;
    fs::copy_file(local, part, fs::copy_options::overwrite_existing, ec);
    if (!ec) fs::rename(part, final, ec);
    if (ec) {
        fs::remove(part, ec);
        printMessage("run", fmt::format("{}: cannot deliver the shard {} to {}: {}", r.node.node,
                                        local.string(), r.node.shardsDir.string(), ec.message()));
        return false;
    }
    fs::remove(local, ec);
    return true;
}

bool mergeAllShards(const NodeRun& r) {
    store::ShardMergeOptions so;
    so.shards = allShards(r.node.shardsDir, r.node.nodeCount);
    so.output = r.output;
    so.force = r.force;
    auto merged = store::mergeShards(so);
    if (!merged) {
        printMessage("run", fmt::format("merging the shards failed: {} (shards kept; redo: {})",
                                        merged.status().message(), mergeHint(r)));
        return false;
    }
    for (const auto& w : merged->warnings) fmt::print(stderr, "hpcprof: warning: {}\n", w);
    return true;
}

} // namespace

NodeOutcome finishOnNode(const NodeRun& r, RawDirClaim& claim) {
    if (!lastRankOfNode(r.node.localDir, r.rank.rank, r.node.localSize)) {
        if (!r.quiet)
            fmt::print(stderr, "hpcprof: rank {} done; the last rank of {} converts its data\n",
                       r.rank.rank, r.node.node);
        return NodeOutcome::RankDone;
    }
    if (simulatedFailure(r)) {
        fmt::print(stderr, "hpcprof: {}: simulated node failure (HPCPROF_SIM_FAIL_NODE): no shard\n",
                   r.node.node);
        return NodeOutcome::NodeLost;
    }
    if (r.node.nodeCount == 1) {
        if (!convertHere(r, r.output, false)) return NodeOutcome::Failed;
        dropLocalRaw(r);
        claim.removeFolder();
        return NodeOutcome::TraceWritten;
    }
    const fs::path local = r.node.localDir.parent_path() / (r.node.node + ".shard.hpcprof");
    if (!convertHere(r, local, true) || !publishShard(r, local)) return NodeOutcome::Failed;
    dropLocalRaw(r);
    if (!lastNodeToArrive(r.node.shardsDir, r.node.nodeCount)) {
        if (!r.quiet)
            fmt::print(stderr, "hpcprof: {} done (shard delivered); the last node to finish writes "
                               "{} (if a node was lost: {})\n",
                       r.node.node, r.output, mergeHint(r));
        return NodeOutcome::ShardWritten;
    }
    if (!mergeAllShards(r)) return NodeOutcome::Failed;
    claim.removeFolder();
    return NodeOutcome::TraceWritten;
}

} // namespace hpcprof::cli

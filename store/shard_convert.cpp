// SPDX-License-Identifier: MIT
// One node's shard: the converter as it is on the node's process folders, then the metadata
// rows the shard merge needs (node, ranks, where the shard's clock stands).
#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/store/shards.hpp"
#include "process_clock.hpp"
#include "process_row.hpp"
#include "raw_reader.hpp"

namespace hpcprof::store {

namespace {

/// The shard's clock facts, from its process headers (oldest first, as the converter orders
/// them): ts 0 is the first one's start; the offset to rank 0 is the median its ranks measured.
struct ShardClock {
    std::string host;
    int64_t originMono = 0;
    bool hasRank0Offset = false;
    int64_t rank0Offset = 0;
    std::set<int64_t> ranks;
};

ShardClock shardClock(const std::vector<RawProcess>& procs) {
    ShardClock c;
    if (procs.empty()) return c;
    const auto& first = procs.front().header;
    c.host = fixedString(first.host, sizeof(first.host));
    c.originMono = first.start.monotonicNs;
    std::vector<bool> owners = rankOwners(procs);
    std::vector<int64_t> offsets;
    for (size_t i = 0; i < procs.size(); ++i) {
        const auto& h = procs[i].header;
        if (!owners[i] || h.rank < 0) continue;
        c.ranks.insert(h.rank);
        if (h.syncInit.valid) offsets.push_back(h.syncInit.offsetNs);
    }
    if (!offsets.empty()) {
        std::nth_element(offsets.begin(), offsets.begin() + offsets.size() / 2, offsets.end());
        c.hasRank0Offset = true;
        c.rank0Offset = offsets[offsets.size() / 2];
    }
    return c;
}

std::string joined(const std::set<int64_t>& values) {
    std::string out;
    for (int64_t v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
    return out;
}

Status writeShardMetadata(const std::filesystem::path& shard, const ShardIdentity& id,
                          const ShardClock& c, const std::vector<std::string>& warnings) {
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(shard.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
        schema::DbHandle closer(raw);
        return Status::error("cannot open shard " + shard.string());
    }
    schema::DbHandle db(raw);
    schema::Statement put(db.get(), "INSERT OR REPLACE INTO metadata(key, value) VALUES (?, ?)");
    auto set = [&](const char* key, const std::string& value) {
        put.bind(1, std::string_view(key));
        put.bind(2, std::string_view(value));
        return put.run();
    };
    auto count = [](int64_t n) { return n > 0 ? std::to_string(n) : std::string(); };
    HPCPROF_RETURN_IF_ERROR(schema::exec(db.get(), "BEGIN"));
    HPCPROF_RETURN_IF_ERROR(set(shard_meta::kNode, id.node));
    HPCPROF_RETURN_IF_ERROR(set(shard_meta::kHost, c.host));
    HPCPROF_RETURN_IF_ERROR(set(shard_meta::kNodesExpected, count(id.nodesExpected)));
    HPCPROF_RETURN_IF_ERROR(set(shard_meta::kWorldSize, count(id.worldSize)));
    HPCPROF_RETURN_IF_ERROR(set(shard_meta::kRanks, joined(c.ranks)));
    HPCPROF_RETURN_IF_ERROR(set(shard_meta::kOriginMonotonicNs, std::to_string(c.originMono)));
    HPCPROF_RETURN_IF_ERROR(
        set(shard_meta::kRank0OffsetNs, c.hasRank0Offset ? std::to_string(c.rank0Offset) : ""));
    HPCPROF_RETURN_IF_ERROR(set(shard_meta::kWarnings, nlohmann::json(warnings).dump()));
    return schema::exec(db.get(), "COMMIT");
}

} // namespace

Result<MergeResult> convertShard(const MergeOptions& options, const ShardIdentity& identity) {
    auto merged = mergeRawDirectory(options);
    if (!merged) return merged;
    RawProblems problems;
    auto procs = listProcesses(options.rawDir, problems);
    if (!procs) return procs.status();
    Status s = writeShardMetadata(options.output, identity, shardClock(procs.value()), merged->warnings);
    if (!s.ok()) return Status::error("shard " + options.output.string() + ": " + s.message());
    return merged;
}

} // namespace hpcprof::store

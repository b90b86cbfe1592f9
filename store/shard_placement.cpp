// SPDX-License-Identifier: MIT
#include "shard_placement.hpp"

#include <algorithm>
#include <cstdlib>

#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/tables.hpp"
#include "hpcprof/store/shards.hpp"

namespace hpcprof::store {

namespace {

std::optional<int64_t> number(const std::map<std::string, std::string>& meta, const char* key) {
    auto it = meta.find(key);
    if (it == meta.end() || it->second.empty()) return std::nullopt;
    char* end = nullptr;
    long long v = std::strtoll(it->second.c_str(), &end, 10);
    if (!end || *end) return std::nullopt;
    return int64_t(v);
}

/// Where shard `s`'s ts 0 lies relative to the reference shard's, in ns; its processes' clock
/// method ("" when the shard shares the reference's clock exactly).
int64_t originAgainst(const ShardInfo& ref, const ShardInfo& s, std::string& method) {
    if (s.originMono && ref.originMono && s.host == ref.host) {
        method.clear();
        return *s.originMono - *ref.originMono;
    }
    // The reference holds rank 0: its monotonic clock is rank 0's, which the other hosts' ranks
    // measured their offset to (this clock minus rank 0's).
    if (s.originMono && ref.originMono && s.rank0Offset && ref.ranks.count(0)) {
        method = "mpi_pingpong";
        return (*s.originMono - *s.rank0Offset) - *ref.originMono;
    }
    method = "realtime";
    return s.originRealtime - ref.originRealtime;
}

} // namespace

Result<ShardInfo> readShardInfo(const std::filesystem::path& file) {
    auto db = schema::openTraceReadOnly(file.string());
    if (!db) return db.status();
    ShardInfo s;
    s.file = file;
    schema::Statement meta(db->get(), "SELECT key, value FROM metadata");
    while (meta.step()) s.meta[meta.text(0)] = meta.text(1);
    schema::Statement ranks(db->get(), "SELECT DISTINCT rank FROM process WHERE rank IS NOT NULL");
    while (ranks.step()) s.ranks.insert(ranks.int64(0));
    // No COUNT(*) of the events here: SQLite reads every leaf of the table for it, the whole
    // shard through the page cache before the merge reads it again (the merge counts the rows it
    // writes instead).
    schema::Statement facts(db->get(), "SELECT (SELECT COALESCE(MAX(world_size), 0) FROM process),"
                                       " (SELECT host FROM process ORDER BY id LIMIT 1)");
    if (facts.step()) {
        s.worldSize = facts.int64(0);
        s.host = facts.text(1);
    }
    schema::Statement procs(db->get(), "SELECT id, start_ts, parent_process_id FROM process ORDER BY id");
    while (procs.step())
        s.processes.push_back({procs.int64(0), procs.int64(1),
                               procs.isNull(2) ? std::nullopt : std::optional<int64_t>(procs.int64(2))});
    auto text = [&](const char* key, const std::string& fallback) {
        auto it = s.meta.find(key);
        return it == s.meta.end() || it->second.empty() ? fallback : it->second;
    };
    std::string stem = file.stem().string();
    if (stem.rfind("shard-", 0) == 0) stem = stem.substr(6);
    s.node = text(shard_meta::kNode, stem);
    s.host = text(shard_meta::kHost, s.host);
    s.originMono = number(s.meta, shard_meta::kOriginMonotonicNs);
    s.rank0Offset = number(s.meta, shard_meta::kRank0OffsetNs);
    s.originRealtime =
        number(s.meta, std::string(schema::meta::kTimeOriginRealtimeNs).c_str()).value_or(0);
    s.nodesExpected = number(s.meta, shard_meta::kNodesExpected).value_or(0);
    s.worldSize = std::max(s.worldSize, number(s.meta, shard_meta::kWorldSize).value_or(0));
    return s;
}

Placement placeShards(std::vector<ShardInfo>& shards) {
    Placement p;
    if (shards.empty()) return p;
    auto ref = std::find_if(shards.begin(), shards.end(),
                            [](const ShardInfo& s) { return s.ranks.count(0) > 0; });
    const ShardInfo reference = ref == shards.end() ? shards.front() : *ref;
    std::vector<int64_t> origins;
    bool mpi = false, otherHost = false;
    for (auto& s : shards) {
        origins.push_back(originAgainst(reference, s, s.clockMethod));
        mpi |= s.clockMethod == "mpi_pingpong" || s.meta[std::string(schema::meta::kClockMethod)] == "mpi_pingpong";
        otherHost |= s.host != reference.host;
    }
    // ts 0 is the earliest shard's origin, as it is the earliest process's start in one
    // conversion.
    int64_t earliest = *std::min_element(origins.begin(), origins.end());
    for (size_t i = 0; i < shards.size(); ++i) shards[i].shift = origins[i] - earliest;
    p.originRealtime = reference.originRealtime + earliest;
    for (size_t i = 0; i < shards.size(); ++i)
        if (origins[i] == earliest) p.originRealtime = shards[i].originRealtime;
    p.clockMethod = mpi ? "mpi_pingpong" : otherHost ? "monotonic+realtime" : "monotonic";
    std::stable_sort(shards.begin(), shards.end(),
                     [](const ShardInfo& a, const ShardInfo& b) { return a.shift < b.shift; });
    return p;
}

} // namespace hpcprof::store

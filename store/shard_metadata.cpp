// SPDX-License-Identifier: MIT
#include "shard_metadata.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "hpcprof/schema/event_categories.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/tables.hpp"

namespace hpcprof::store {

namespace {

using nlohmann::json;

/// A counter's reasons with their process counts: its "reasons" list, else its one "reason".
void addReasons(std::map<std::string, int64_t>& into, const json& row) {
    if (row.contains("reasons") && row["reasons"].is_array()) {
        for (const auto& x : row["reasons"]) into[x.value("reason", "")] += x.value("processes", int64_t(0));
    } else if (row.contains("reason")) {
        into[row.value("reason", "")] += row.value("processes", int64_t(0));
    }
}

/// Rows of one list ("available", "unavailable") keyed by counter name, processes summed; for
/// unavailable counters the reason most processes gave, and every reason when they differ.
void addCounters(std::map<std::string, json>& into, const json& list) {
    if (!list.is_array()) return;
    for (const auto& row : list) {
        std::string name = row.value("counter", "");
        auto [it, fresh] = into.try_emplace(name, row);
        if (fresh) continue;
        std::map<std::string, int64_t> reasons;
        addReasons(reasons, it->second);
        addReasons(reasons, row);
        it->second["processes"] = it->second.value("processes", int64_t(0)) + row.value("processes", int64_t(0));
        if (reasons.empty()) continue;
        auto most = std::max_element(reasons.begin(), reasons.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
        it->second["reason"] = most->first;
        if (reasons.size() < 2) continue;
        json all = json::array();
        for (const auto& [reason, n] : reasons) all.push_back({{"reason", reason}, {"processes", n}});
        it->second["reasons"] = all;
    }
}

/// "4,5": ranks 0..worldSize-1 no shard holds.
std::vector<int64_t> missingRanks(const std::vector<ShardInfo>& shards, int64_t worldSize) {
    std::set<int64_t> present;
    for (const auto& s : shards) present.insert(s.ranks.begin(), s.ranks.end());
    std::vector<int64_t> missing;
    for (int64_t r = 0; r < worldSize; ++r)
        if (!present.count(r)) missing.push_back(r);
    return missing;
}

/// Nodes named node0..nodeN-1 (Slurm, torchrun, simulated nodes): the missing ones by name;
/// else how many.
std::vector<std::string> missingNodes(const std::vector<ShardInfo>& shards, int64_t expected) {
    std::set<std::string> present;
    for (const auto& s : shards) present.insert(s.node);
    if (expected <= int64_t(present.size())) return {};
    bool numbered = true;
    for (const auto& n : present) {
        numbered &= n.rfind("node", 0) == 0 && n.size() > 4 &&
                    n.find_first_not_of("0123456789", 4) == std::string::npos &&
                    std::stoll(n.substr(4)) < expected;
    }
    std::vector<std::string> missing;
    if (numbered) {
        for (int64_t k = 0; k < expected; ++k)
            if (!present.count("node" + std::to_string(k))) missing.push_back("node" + std::to_string(k));
        return missing;
    }
    return {std::to_string(expected - int64_t(present.size())) + " node(s), names unknown"};
}

template <typename T>
std::string joined(const std::vector<T>& items) {
    std::string out;
    for (const auto& i : items) {
        if (!out.empty()) out += ",";
        if constexpr (std::is_same_v<T, std::string>)
            out += i;
        else
            out += std::to_string(i);
    }
    return out;
}

int64_t metaSum(const std::vector<ShardInfo>& shards, std::string_view key) {
    int64_t sum = 0;
    for (const auto& s : shards)
        if (auto it = s.meta.find(std::string(key)); it != s.meta.end() && !it->second.empty())
            sum += std::stoll(it->second);
    return sum;
}

/// The shards' warnings, each text once in the order first seen, "(N nodes)" added when several
/// nodes gave it (a counter no node could count, the same problem on every node).
std::vector<std::string> mergedWarnings(const std::vector<ShardInfo>& shards) {
    std::vector<std::string> order;
    std::map<std::string, int64_t> nodes;
    for (const auto& s : shards) {
        auto it = s.meta.find(shard_meta::kWarnings);
        if (it == s.meta.end()) continue;
        json list = json::parse(it->second, nullptr, false);
        if (!list.is_array()) continue;
        std::set<std::string> seen; // a node's repeated line counts once for it
        for (const auto& w : list) {
            if (!w.is_string() || !seen.insert(w.get<std::string>()).second) continue;
            if (nodes[w.get<std::string>()]++ == 0) order.push_back(w.get<std::string>());
        }
    }
    for (auto& w : order)
        if (int64_t n = nodes[w]; n > 1) w += " (" + std::to_string(n) + " nodes)";
    return order;
}

/// The categories of every shard's events (metadata event_categories), or none when a shard
/// does not say (a shard of an older build): the row may only name too many, never too few.
std::optional<std::string> mergedEventCategories(const std::vector<ShardInfo>& shards) {
    schema::CategorySet all;
    for (const auto& s : shards) {
        auto it = s.meta.find(std::string(schema::kEventCategoriesKey));
        if (it == s.meta.end()) return std::nullopt;
        auto set = schema::parseEventCategories(it->second);
        if (!set) return std::nullopt;
        all |= *set;
    }
    return schema::eventCategoriesText(all);
}

} // namespace

std::string mergeCountersSummaries(const std::vector<std::string>& docs) {
    std::map<std::string, json> available, unavailable;
    std::map<std::string, json> hosts;
    json merged = json::object();
    for (const auto& text : docs) {
        json d = json::parse(text, nullptr, false);
        if (d.is_discarded() || !d.is_object()) continue;
        if (!merged.contains("period_ns") && d.contains("period_ns")) merged["period_ns"] = d["period_ns"];
        addCounters(available, d.value("available", json::array()));
        addCounters(unavailable, d.value("unavailable", json::array()));
        for (const auto& h : d.value("hosts", json::array())) hosts.try_emplace(h.value("host", ""), h);
    }
    auto list = [](const std::map<std::string, json>& m) {
        json a = json::array();
        for (const auto& [k, v] : m) a.push_back(v);
        return a;
    };
    merged["available"] = list(available);
    merged["unavailable"] = list(unavailable);
    merged["hosts"] = list(hosts);
    return merged.dump();
}

Status writeMergedMetadata(sqlite3* db, const std::vector<ShardInfo>& shards,
                           const Placement& placement, ShardMergeResult& result) {
    int64_t expected = 0, worldSize = 0;
    bool partial = false;
    std::vector<std::string> counters, nodes;
    for (const auto& s : shards) {
        expected = std::max(expected, s.nodesExpected);
        worldSize = std::max(worldSize, s.worldSize);
        partial |= s.meta.count("partial") && s.meta.at("partial") == "true";
        if (auto it = s.meta.find("counters"); it != s.meta.end()) counters.push_back(it->second);
        nodes.push_back(s.node);
    }
    result.missingRanks = missingRanks(shards, worldSize);
    result.missingNodes = missingNodes(shards, expected);
    result.partial = partial || !result.missingRanks.empty() || !result.missingNodes.empty();
    result.warnings = mergedWarnings(shards);
    std::map<std::string, std::string> rows = {
        {std::string(schema::meta::kTimeOriginRealtimeNs), std::to_string(placement.originRealtime)},
        {std::string(schema::meta::kClockMethod), placement.clockMethod},
        {std::string(schema::meta::kPartial), result.partial ? "true" : "false"},
        {std::string(schema::meta::kChunksMappedAhead),
         std::to_string(metaSum(shards, schema::meta::kChunksMappedAhead))},
        {std::string(schema::meta::kChunksMappedOnThread),
         std::to_string(metaSum(shards, schema::meta::kChunksMappedOnThread))},
        {shard_meta::kNodesMerged, joined(nodes)},
    };
    if (!counters.empty()) rows["counters"] = mergeCountersSummaries(counters);
    if (!result.missingNodes.empty()) rows[shard_meta::kNodesMissing] = joined(result.missingNodes);
    if (!result.missingRanks.empty()) rows[shard_meta::kRanksMissing] = joined(result.missingRanks);
    const auto categories = mergedEventCategories(shards);
    if (categories) rows[std::string(schema::kEventCategoriesKey)] = *categories;
    HPCPROF_RETURN_IF_ERROR(schema::exec(db, "BEGIN; DELETE FROM metadata WHERE key LIKE 'shard\\_%' ESCAPE '\\'"));
    if (!categories) { // the base shard's row names its own events only
        schema::Statement drop(db, "DELETE FROM metadata WHERE key = ?");
        drop.bind(1, schema::kEventCategoriesKey);
        HPCPROF_RETURN_IF_ERROR(drop.run());
    }
    schema::Statement put(db, "INSERT OR REPLACE INTO metadata(key, value) VALUES (?, ?)");
    for (const auto& [key, value] : rows) {
        put.bind(1, std::string_view(key));
        put.bind(2, std::string_view(value));
        HPCPROF_RETURN_IF_ERROR(put.run());
    }
    return schema::exec(db, "COMMIT");
}

} // namespace hpcprof::store

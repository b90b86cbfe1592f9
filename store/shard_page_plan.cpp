// SPDX-License-Identifier: MIT
#include "shard_page_plan.hpp"

#include "direct_io.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::store {

namespace {

int64_t scalar(sqlite3* db, const std::string& sql) {
    schema::Statement s(db, sql);
    return s.step() ? s.int64(0) : 0;
}

/// A rowid table whose one-column INTEGER PRIMARY KEY (the rowid) is `id` for event and
/// `event_id` for tables keyed by event, with no index of its own.
bool qualifies(sqlite3* db, const std::string& table) {
    const std::string key = table == "event" ? "id" : "event_id";
    schema::Statement pk(db, "SELECT name, upper(type) FROM pragma_table_info(?, 'main') WHERE pk > 0");
    pk.bind(1, std::string_view(table));
    if (!pk.step() || pk.text(0) != key || pk.text(1) != "INTEGER" || pk.step()) return false;
    schema::Statement sql(db, "SELECT sql FROM main.sqlite_schema WHERE type = 'table' AND name = ?");
    sql.bind(1, std::string_view(table));
    if (!sql.step()) return false;
    std::string text = sql.text(0);
    std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    if (text.find("WITHOUT ROWID") != std::string::npos) return false;
    return scalar(db, fmt::format("SELECT COUNT(*) FROM main.sqlite_schema WHERE type = 'index' AND tbl_name = '{}'",
                                  table)) == 0;
}

} // namespace

void PagePlan::chooseTables(sqlite3* db, const std::vector<std::string>& candidates) {
    for (const auto& t : candidates)
        if (qualifies(db, t)) {
            m_tables[t];
            m_order.push_back(t);
        }
}

void PagePlan::addShard(sqlite3* db, ColumnCatalog& columns, const std::string& src, const Maps& maps) {
    for (auto it = m_order.begin(); it != m_order.end();) {
        const int64_t root = scalar(db, fmt::format("SELECT rootpage FROM {}.sqlite_schema WHERE type = 'table'"
                                                    " AND name = '{}'", src, *it));
        if (root < 2 || !columns.sameColumns(src, *it)) { // this table with SQL
            m_tables.erase(*it);
            it = m_order.erase(it);
            continue;
        }
        m_tables[*it].shardRoots.push_back(uint32_t(root));
        ++it;
    }
    Maps kept{};
    for (size_t i = 0; i < maps.size(); ++i)
        if (maps[i]) kept[i] = &m_mapCopies.emplace_back(*maps[i]);
    m_maps.push_back(kept);
}

Status PagePlan::addRun(ColumnCatalog& columns, const std::string& src, const std::string& table, size_t shard,
                        int64_t first, int64_t last, int64_t offset, const OpRule& rule) {
    auto cols = columns.shared(src, table);
    if (!cols) return cols.status();
    Run run{shard, first, last, offset, {}};
    for (const auto& c : *cols) run.ops.push_back(rule(c));
    m_tables.at(table).runs.push_back(std::move(run));
    return {};
}

void PagePlan::readRoots(sqlite3* db) {
    for (auto& [name, t] : m_tables)
        t.root = uint32_t(scalar(db, fmt::format("SELECT rootpage FROM main.sqlite_schema WHERE type = 'table'"
                                                 " AND name = '{}'", name)));
}

Status PagePlan::write(const std::string& path, const std::vector<std::filesystem::path>& shardFiles,
                       std::map<std::string, int64_t>& rows, unsigned threads) const {
    // Decided once per shard, before any table reads it through the cache.
    std::vector<char> pastCache(shardFiles.size());
    for (size_t i = 0; i < shardFiles.size(); ++i) pastCache[i] = readsPastCache(shardFiles[i]);
    for (const auto& name : m_order) {
        const Table& t = m_tables.at(name);
        auto appender = TableAppender::open(path, t.root);
        if (!appender) return appender.status();
        for (const auto& r : t.runs) {
            Status s = appender->append(shardFiles[r.shard], t.shardRoots[r.shard], r.first, r.last, r.offset, r.ops, threads,
                                        pastCache[r.shard] != 0);
            if (!s.ok()) {
                appender->abandon();
                return Status::error(name + ": " + s.message());
            }
        }
        HPCPROF_RETURN_IF_ERROR(appender->finish());
        rows[name] = appender->rows();
    }
    return {};
}

} // namespace hpcprof::store

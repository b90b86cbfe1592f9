// SPDX-License-Identifier: MIT
#include "shard_copy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::store {

namespace {

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

} // namespace

std::optional<std::string> placedColumn(const std::string& column, const CopyOffsets& o) {
    if (column == "ts" || endsWith(column, "_ts")) return fmt::format("e.{} + {}", column, o.shift);
    if (column == "event_id" || endsWith(column, "_event_id"))
        return fmt::format("e.{} + {}", column, o.event);
    return std::nullopt;
}

std::vector<std::string> ColumnCatalog::columns(const std::string& schema, const std::string& table) {
    auto [it, fresh] = m_cache.try_emplace({schema, table});
    if (!fresh) return it->second;
    if (auto names = schema::columnNames(m_db, schema, table)) it->second = std::move(names.value());
    return it->second;
}

void ColumnCatalog::forget(const std::string& schema) {
    for (auto it = m_cache.begin(); it != m_cache.end();)
        it = it->first.first == schema ? m_cache.erase(it) : std::next(it);
}

Result<std::vector<std::string>> ColumnCatalog::shared(const std::string& src, const std::string& table) {
    const std::vector<std::string> mine = columns("main", table), theirs = columns(src, table);
    std::vector<std::string> out;
    for (const auto& c : mine)
        if (std::find(theirs.begin(), theirs.end(), c) != theirs.end()) out.push_back(c);
    if (out.empty()) return Status::error("the shard has no table " + table);
    return out;
}

std::vector<std::string> ColumnCatalog::eventKeyedTables() {
    std::vector<std::string> out;
    schema::Statement s(m_db, "SELECT m.name FROM main.sqlite_schema m WHERE m.type = 'table'"
                              " AND m.name NOT LIKE 'sqlite_%' AND m.name != 'event' AND EXISTS"
                              " (SELECT 1 FROM pragma_table_info(m.name, 'main') c WHERE c.name = 'event_id')"
                              " ORDER BY m.rowid");
    while (s.step()) out.push_back(s.text(0));
    return out;
}

Result<std::string> ColumnCatalog::insertSelect(const std::string& src, const std::string& table,
                                                const ColumnRule& rule, const std::string& joins) {
    auto cols = shared(src, table);
    if (!cols) return cols.status();
    std::string into, select;
    for (const auto& c : *cols) {
        std::optional<std::string> expr = rule(c);
        if (expr && expr->empty()) continue;
        into += (into.empty() ? "" : ", ") + c;
        select += (select.empty() ? "" : ", ") + (expr ? *expr : "e." + c);
    }
    return fmt::format("INSERT INTO main.{t}({into}) SELECT {select} FROM {src}.{t} e{joins}",
                       fmt::arg("t", table), fmt::arg("into", into), fmt::arg("select", select),
                       fmt::arg("src", src), fmt::arg("joins", joins));
}

namespace {
constexpr int64_t kUnmapped = -1;
}

IdMaps::IdMaps(sqlite3* db) : m_db(db) {
    sqlite3_create_function(db, "hpcprof_map", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, this, &IdMaps::lookup,
                            nullptr, nullptr);
}

IdMaps::~IdMaps() { sqlite3_create_function(m_db, "hpcprof_map", 2, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr); }

void IdMaps::lookup(sqlite3_context* c, int, sqlite3_value** argv) {
    const auto* self = static_cast<const IdMaps*>(sqlite3_user_data(c));
    const int64_t map = sqlite3_value_int64(argv[0]);
    if (sqlite3_value_type(argv[1]) == SQLITE_NULL || map < 0 || size_t(map) >= self->m_maps.size()) {
        sqlite3_result_null(c);
        return;
    }
    const auto& m = self->m_maps[size_t(map)];
    const int64_t id = sqlite3_value_int64(argv[1]);
    if (id >= 0 && size_t(id) < m.size() && m[size_t(id)] != kUnmapped)
        sqlite3_result_int64(c, m[size_t(id)]);
    else
        sqlite3_result_null(c);
}

Result<int> IdMaps::load(const std::string& table) {
    std::vector<int64_t> m;
    bool changes = false;
    schema::Statement s(m_db, "SELECT old, new FROM " + table);
    while (s.step()) {
        const int64_t old = s.int64(0), id = s.int64(1);
        if (old < 0) return Status::error("negative id in " + table);
        if (size_t(old) >= m.size()) m.resize(size_t(old) + 1, kUnmapped);
        m[size_t(old)] = id;
        changes |= old != id;
    }
    if (!s.error().ok()) return s.error();
    if (!changes) return -1;
    m_maps.push_back(std::move(m));
    return int(m_maps.size() - 1);
}

} // namespace hpcprof::store

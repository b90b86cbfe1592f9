// SPDX-License-Identifier: MIT
#include "table_statistics.hpp"

#include <vector>

#include <fmt/format.h>

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::store {

Status writeStatistics(sqlite3* db, const std::map<std::string, int64_t>& counted) {
    if (counted.empty()) return schema::exec(db, "ANALYZE;");
    std::vector<std::string> tables;
    schema::Statement list(db, "SELECT name FROM main.sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    while (list.step()) tables.push_back(list.text(0));
    for (const auto& t : tables) // first: it makes sqlite_stat1
        if (!counted.count(t)) HPCPROF_RETURN_IF_ERROR(schema::exec(db, "ANALYZE main." + t));
    for (const auto& [t, rows] : counted) // as ANALYZE writes them: none for an empty table
        if (rows > 0)
            HPCPROF_RETURN_IF_ERROR(
                schema::exec(db, fmt::format("INSERT INTO sqlite_stat1 VALUES ('{}', NULL, '{}')", t, rows)));
    return {};
}

} // namespace hpcprof::store

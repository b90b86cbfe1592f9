// SPDX-License-Identifier: MIT
// Test support: small queries against a trace file (read-only).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::test {

class TraceQuery {
public:
    /// Opens the trace read-only; a test failure is raised (exception) if it does not open.
    explicit TraceQuery(const std::string& path);

    /// First column of the first row as an integer (0 for NULL or no row).
    int64_t scalar(const std::string& sql) const;
    /// First column of the first row as text.
    std::string text(const std::string& sql) const;
    /// All rows, columns joined with '|' (NULL as empty).
    std::vector<std::string> rows(const std::string& sql) const;

    sqlite3* db() const { return m_db.get(); }

private:
    schema::DbHandle m_db;
};

} // namespace hpcprof::test

// SPDX-License-Identifier: MIT
// RAII handles for SQLite and the two ways a trace file is opened: created empty from the DDL
// (by the store), or opened read-only with its application id and schema version checked (by the
// analyzer, report, diff and GUI).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::schema {

struct SqliteCloser {
    void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};
struct StmtFinalizer {
    void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using DbHandle = std::unique_ptr<sqlite3, SqliteCloser>;

/// A prepared statement with bind helpers (1-based indexes, like SQLite).
class Statement {
public:
    Statement() = default;
    Statement(sqlite3* db, std::string_view sql);

    bool valid() const { return m_stmt != nullptr; }
    sqlite3_stmt* get() const { return m_stmt.get(); }

    void bind(int i, int64_t v) { sqlite3_bind_int64(m_stmt.get(), i, v); }
    void bind(int i, double v) { sqlite3_bind_double(m_stmt.get(), i, v); }
    void bind(int i, std::string_view v) {
        sqlite3_bind_text(m_stmt.get(), i, v.data(), int(v.size()), SQLITE_TRANSIENT);
    }
    void bindNull(int i) { sqlite3_bind_null(m_stmt.get(), i); }
    /// Binds v, or NULL when v == nullValue.
    void bindOrNull(int i, int64_t v, int64_t nullValue) {
        if (v == nullValue)
            bindNull(i);
        else
            bind(i, v);
    }

    /// Steps once: true while a row is available. Errors end the iteration and are kept.
    bool step();
    /// Runs a statement that returns no rows, then resets it for reuse.
    Status run();
    /// Rewinds the statement and clears its bindings (nothing for one whose prepare failed:
    /// SQLite's clear_bindings does not accept a null statement).
    void reset() {
        if (!m_stmt) return;
        sqlite3_reset(m_stmt.get());
        sqlite3_clear_bindings(m_stmt.get());
    }

    int64_t int64(int col) const { return sqlite3_column_int64(m_stmt.get(), col); }
    double real(int col) const { return sqlite3_column_double(m_stmt.get(), col); }
    bool isNull(int col) const { return sqlite3_column_type(m_stmt.get(), col) == SQLITE_NULL; }
    std::string text(int col) const;

    const Status& error() const { return m_error; }

private:
    std::unique_ptr<sqlite3_stmt, StmtFinalizer> m_stmt;
    Status m_error;
};

/// Executes one or more SQL statements that return no rows.
Status exec(sqlite3* db, std::string_view sql);

/// Whether the database has table `name` (tables a later schema version added are absent from
/// older traces, which readers still open).
bool hasTable(sqlite3* db, std::string_view name);

/// The column names of `table` in the attached database `schema` ("main", "temp" or an ATTACH
/// name; "" = the first that has it, in SQLite's search order: temp, main, then attached ones),
/// in table order; empty when there is no such table.
Result<std::vector<std::string>> columnNames(sqlite3* db, std::string_view schema,
                                             std::string_view table);

/// Creates a new, empty trace at `path` (which must not exist) with the current schema.
Result<DbHandle> createTrace(const std::string& path);

/// Opens an existing trace read-only; refuses files that are not hpcprof traces, that have
/// a schema version this build does not know, or that lack a table, view or column of that
/// version (checkTraceTables), with a message that says which.
Result<DbHandle> openTraceReadOnly(const std::string& path);

/// For a trace of an older schema version this build still reads (kOldestReadableSchemaVersion),
/// creates the connection's temporary views that give it the current tables' columns (version
/// 2: an `event` view with event_detail's offset as `offset`); for a current trace, nothing.
/// Every handle readers query through must have it (openTraceReadOnly does it).
Status adaptOlderTrace(sqlite3* db);

/// Checks that `db` has every table and view of the schema (the DDL) with every column, and
/// that its views can be read: readers prepare their queries against them. The message names
/// the first one missing.
Status checkTraceTables(sqlite3* db);

} // namespace hpcprof::schema

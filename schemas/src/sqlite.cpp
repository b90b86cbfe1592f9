// SPDX-License-Identifier: MIT
#include "hpcprof/schema/sqlite.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/tables.hpp"

namespace hpcprof::schema {

Statement::Statement(sqlite3* db, std::string_view sql) {
    sqlite3_stmt* s = nullptr;
    if (sqlite3_prepare_v3(db, sql.data(), int(sql.size()), SQLITE_PREPARE_PERSISTENT, &s,
                           nullptr) != SQLITE_OK) {
        m_error = Status::error(std::string("SQL error: ") + sqlite3_errmsg(db) + " in: " +
                                std::string(sql.substr(0, 120)));
        return;
    }
    m_stmt.reset(s);
}

bool Statement::step() {
    if (!m_stmt) return false;
    int rc = sqlite3_step(m_stmt.get());
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE)
        m_error = Status::error(std::string("SQL error: ") +
                                sqlite3_errmsg(sqlite3_db_handle(m_stmt.get())));
    return false;
}

Status Statement::run() {
    if (!m_stmt) return m_error;
    int rc = sqlite3_step(m_stmt.get());
    Status s;
    if (rc != SQLITE_DONE && rc != SQLITE_ROW)
        s = Status::error(std::string("SQL error: ") +
                          sqlite3_errmsg(sqlite3_db_handle(m_stmt.get())));
    sqlite3_reset(m_stmt.get());
    return s;
}

std::string Statement::text(int col) const {
    const auto* p = sqlite3_column_text(m_stmt.get(), col);
    return p ? std::string(reinterpret_cast<const char*>(p),
                           size_t(sqlite3_column_bytes(m_stmt.get(), col)))
             : std::string();
}

Status exec(sqlite3* db, std::string_view sql) {
    char* err = nullptr;
    std::string text(sql);
    if (sqlite3_exec(db, text.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
        std::string message = err ? err : "unknown SQLite error";
        sqlite3_free(err);
        return Status::error("SQL error: " + message);
    }
    return {};
}

bool hasTable(sqlite3* db, std::string_view name) {
    Statement st(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    if (!st.valid()) return false;
    st.bind(1, name);
    return st.step();
}

Result<std::vector<std::string>> columnNames(sqlite3* db, std::string_view schema,
                                             std::string_view table) {
    Statement s(db, schema.empty() ? "SELECT name FROM pragma_table_info(?)"
                                   : "SELECT name FROM pragma_table_info(?, ?)");
    s.bind(1, table);
    if (!schema.empty()) s.bind(2, schema);
    std::vector<std::string> names;
    while (s.step()) names.push_back(s.text(0));
    if (!s.error().ok()) return s.error();
    return names;
}

Result<DbHandle> createTrace(const std::string& path) {
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &raw,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_EXRESCODE |
                                 SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW,
                             nullptr);
    DbHandle db(raw);
    if (rc != SQLITE_OK)
        return Status::error("cannot create trace " + path + ": " +
                             (raw ? sqlite3_errmsg(raw) : "out of memory"));
    // Building a trace is a one-shot bulk load into a private file: no journal, no fsync until
    // the end (the store renames the file into place only after it is complete).
    HPCPROF_RETURN_IF_ERROR(exec(db.get(), "PRAGMA page_size=65536; PRAGMA journal_mode=OFF;"
                                           "PRAGMA synchronous=OFF; PRAGMA locking_mode=EXCLUSIVE;"
                                           "PRAGMA cache_size=-65536;"));
    HPCPROF_RETURN_IF_ERROR(exec(db.get(), ddl()));
    Statement cat(db.get(), "INSERT INTO category(id, name, class) VALUES (?, ?, ?)");
    for (const auto& c : kCategories) {
        cat.bind(1, int64_t(c.category));
        cat.bind(2, c.name);
        cat.bind(3, c.className);
        HPCPROF_RETURN_IF_ERROR(cat.run());
    }
    return db;
}

namespace {

/// Tables and views of the schema, each with its columns, in DDL order.
using TableColumns = std::vector<std::pair<std::string, std::vector<std::string>>>;

/// The names and columns of every table and view of `db` ("" as the error when one cannot be
/// read, e.g. a view over a table that is gone).
Result<TableColumns> tableColumns(sqlite3* db, const std::vector<std::string>& names) {
    TableColumns out;
    for (const std::string& name : names) {
        // "": an older trace's adapted tables are temp views shadowing its own (adaptOlderTrace).
        auto columns = columnNames(db, "", name);
        if (!columns) return Status::error("'" + name + "' cannot be read: " + columns.status().message());
        out.emplace_back(name, std::move(columns.value()));
    }
    return out;
}

/// What the DDL of this build creates, computed once from an in-memory database.
const TableColumns& expectedTables() {
    static const TableColumns kExpected = [] {
        sqlite3* raw = nullptr;
        sqlite3_open_v2(":memory:", &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_MEMORY, nullptr);
        DbHandle db(raw);
        std::vector<std::string> names;
        if (db && exec(db.get(), ddl()).ok()) {
            Statement s(db.get(), "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view')"
                                  " AND name NOT LIKE 'sqlite_%' ORDER BY rowid");
            while (s.step()) names.push_back(s.text(0));
        }
        auto t = tableColumns(db.get(), names);
        return t ? std::move(t.value()) : TableColumns();
    }();
    return kExpected;
}

} // namespace

Status checkTraceTables(sqlite3* db) {
    const TableColumns& expected = expectedTables();
    std::vector<std::string> names;
    for (const auto& [name, cols] : expected) names.push_back(name);
    auto found = tableColumns(db, names);
    if (!found) return found.status();
    for (size_t i = 0; i < expected.size(); ++i) {
        const auto& [name, wanted] = expected[i];
        const auto& have = found.value()[i].second;
        auto addedLater = [](const std::string& item) {
            return std::find(std::begin(kAddedLater), std::end(kAddedLater), item) !=
                   std::end(kAddedLater);
        };
        if (have.empty() && addedLater(name)) continue; // an older trace
        if (have.empty()) return Status::error("no table or view '" + name + "'");
        for (const std::string& c : wanted)
            if (std::find(have.begin(), have.end(), c) == have.end() &&
                !addedLater(name + "." + c))
                return Status::error("'" + name + "' has no column '" + c + "'");
    }
    return {};
}

namespace {
/// Refuses a schema version this build does not read, with a message naming both.
Status checkVersion(sqlite3* db, const std::string& path) {
    Statement version(db, "PRAGMA user_version");
    if (!version.step()) return Status::error(path + ": cannot read schema version");
    int64_t v = version.int64(0);
    if (v > 0 && v < kOldestReadableSchemaVersion)
        return Status::error(path + ": written by an older hpcprof (trace schema version " + std::to_string(v) +
                             "; this one reads version " + std::to_string(kSchemaVersion) +
                             "): convert its raw data again with hpcprof merge if it was kept (--keep-raw), "
                             "or read it with the hpcprof that wrote it");
    if (v < kOldestReadableSchemaVersion || v > kSchemaVersion)
        return Status::error(path + ": trace schema version " + std::to_string(v) +
                             " is not supported by this hpcprof (it reads version " +
                             std::to_string(kSchemaVersion) + ")");
    return {};
}
} // namespace

Status adaptOlderTrace(sqlite3* db) {
    Statement version(db, "PRAGMA main.user_version");
    if (!version.step()) return Status::error("cannot read schema version");
    if (version.int64(0) != 2) return {};
    // Version 2 kept a positioned call's offset in event_detail. A temporary view named like the
    // table is found first by unqualified names, so every reader's `event` gains the column;
    // the LEFT JOIN on event_detail's primary key keeps id-range scans on the event b-tree.
    std::string columns;
    for (std::string_view c : kEventColumns)
        if (c != "offset") columns += "e." + std::string(c) + ", ";
    return exec(db, "CREATE TEMP VIEW IF NOT EXISTS event AS SELECT " + columns +
                        "d.offset AS offset FROM main.event e"
                        " LEFT JOIN main.event_detail d ON d.event_id = e.id");
}

Result<DbHandle> openTraceReadOnly(const std::string& path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) return Status::error(path + ": no such file");
    if (!S_ISREG(st.st_mode)) return Status::error(path + ": not a regular file");
    if (st.st_size == 0) return Status::error(path + ": empty file, not an hpcprof trace");
    // A truncated copy is recognised before SQLite reads a missing page: the file header says
    // how many pages the database has.
    if (std::FILE* f = std::fopen(path.c_str(), "rb")) {
        unsigned char header[100] = {};
        size_t got = std::fread(header, 1, sizeof(header), f);
        std::fclose(f);
        if (got == sizeof(header) && std::memcmp(header, "SQLite format 3", 16) == 0) {
            uint32_t pageSize = (uint32_t(header[16]) << 8) | header[17];
            if (pageSize == 1) pageSize = 65536;
            uint32_t pageCount = (uint32_t(header[28]) << 24) | (uint32_t(header[29]) << 16) |
                                 (uint32_t(header[30]) << 8) | header[31];
            uint64_t expected = uint64_t(pageSize) * pageCount;
            if (pageCount > 0 && uint64_t(st.st_size) < expected)
                return Status::error(path + ": damaged trace (file is truncated: " +
                                     std::to_string(st.st_size) + " bytes, expected " +
                                     std::to_string(expected) + ")");
        }
    }
    sqlite3* raw = nullptr;
    int rc = sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY, nullptr);
    DbHandle db(raw);
    if (rc != SQLITE_OK)
        return Status::error(path + ": cannot open: " + (raw ? sqlite3_errmsg(raw) : "out of memory"));
    Statement appId(db.get(), "PRAGMA application_id");
    if (!appId.valid() || !appId.step())
        return Status::error(path + ": not an hpcprof trace (not a readable SQLite database" +
                             (appId.error().ok() ? std::string(")") : ": " + appId.error().message() + ")"));
    if (appId.int64(0) != kApplicationId)
        return Status::error(path + ": not an hpcprof trace (SQLite application_id is " +
                             std::to_string(appId.int64(0)) + ")");
    HPCPROF_RETURN_IF_ERROR(checkVersion(db.get(), path));
    if (Status adapted = adaptOlderTrace(db.get()); !adapted.ok())
        return Status::error(path + ": damaged trace (" + adapted.message() + ")");
    if (Status tables = checkTraceTables(db.get()); !tables.ok())
        return Status::error(path + ": damaged trace (" + tables.message() + ")");
    // A truncated copy still opens; its header says how many pages it should have.
    Statement pages(db.get(), "PRAGMA page_count");
    Statement pageSize(db.get(), "PRAGMA page_size");
    if (!pages.step() || !pageSize.step())
        return Status::error(path + ": damaged trace (cannot read its page count)");
    if (int64_t(st.st_size) < pages.int64(0) * pageSize.int64(0))
        return Status::error(path + ": damaged trace (file is truncated: " +
                             std::to_string(st.st_size) + " bytes, expected " +
                             std::to_string(pages.int64(0) * pageSize.int64(0)) + ")");
    return db;
}

} // namespace hpcprof::schema

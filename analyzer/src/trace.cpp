// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer {

Result<Trace> Trace::open(const std::string& path) {
    auto db = schema::openTraceReadOnly(path);
    if (!db) return db.status();
    Trace t;
    t.m_db = std::move(db.value());
    t.m_path = path;
    // The checked handle is replaced by one tuned for long read-only scans: a Trace is used by
    // one thread at a time (no SQLite mutex), and the file is memory-mapped instead of copied
    // page by page. If the reopen fails the checked handle is kept.
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) == SQLITE_OK) {
        t.m_db.reset(raw);
        schema::exec(raw, "PRAGMA mmap_size=68719476736; PRAGMA cache_size=-65536;");
    } else if (raw) {
        sqlite3_close_v2(raw);
    }
    return t;
}

std::string Trace::metadata(const std::string& key) const {
    schema::Statement s(db(), "SELECT value FROM metadata WHERE key = ?");
    s.bind(1, key);
    return s.step() ? s.text(0) : std::string();
}

} // namespace hpcprof::analyzer

// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/trace.hpp"

#include "hpcprof/schema/packed_trace.hpp"

namespace hpcprof::analyzer {

Result<Trace> Trace::open(const std::string& path) {
    auto unpacked = schema::unpackIfPacked(path);
    if (!unpacked) return unpacked.status();
    const std::string file = unpacked.value() ? unpacked.value()->path() : path;
    auto db = schema::openTraceReadOnly(file);
    if (!db) {
        // Messages name the file the user gave, not the unpacked copy.
        std::string message = db.status().message();
        if (file != path && message.compare(0, file.size(), file) == 0)
            message = path + " (unpacked)" + message.substr(file.size());
        return Status::error(message);
    }
    Trace t;
    t.m_db = std::move(db.value());
    t.m_path = path;
    t.m_file = file;
    t.m_unpacked = std::move(unpacked.value());
    // The checked handle is replaced by one tuned for long read-only scans: a Trace is used by
    // one thread at a time (no SQLite mutex), and pages are read through a small cache (8 MiB per
    // connection: the main one and one per worker), not memory-mapped. The scans read each page
    // about once, so a larger cache only holds what was read; both it and mapped pages (every
    // page a scan touches stays resident while it is mapped) made the analysis's peak RSS grow
    // with the trace's size (issue 22: bounded analysis memory). If the reopen fails the checked
    // handle is kept.
    sqlite3* raw = nullptr;
    if (sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) == SQLITE_OK &&
        schema::adaptOlderTrace(raw).ok()) {
        t.m_db.reset(raw);
        schema::exec(raw, "PRAGMA mmap_size=0; PRAGMA cache_size=-8192;");
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

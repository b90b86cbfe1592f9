// SPDX-License-Identifier: MIT
// The analyzer's access to a Trace's SQLite connection. Only analyzer sources include this: the
// connection stays private to the library (callers use its queries, never SQL of their own).
#pragma once

#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer::detail {

struct TraceAccess {
    static sqlite3* db(const Trace& t) { return t.db(); }
    static const std::string& file(const Trace& t) { return t.file(); }
};

/// The connection of `t`, for the analyzer's own queries.
inline sqlite3* db(const Trace& t) { return TraceAccess::db(t); }
/// The file its connection reads (a packed trace's unpacked copy), for reads below SQL.
inline const std::string& file(const Trace& t) { return TraceAccess::file(t); }

} // namespace hpcprof::analyzer::detail

// SPDX-License-Identifier: MIT
/// Read-only access to a trace file for analyses. Opening checks that the file is an hpcprof
/// trace of a supported schema version; analyses never write. A Trace is used by one thread at a
/// time (its connection has no SQLite mutex); open one Trace per worker thread.
#pragma once

#include <memory>
#include <string>

#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::schema {
class UnpackedTrace; // schema/packed_trace.hpp
}

namespace hpcprof::analyzer {

namespace detail {
struct TraceAccess; // the analyzer's own way to its connection (src/trace_access.hpp)
}

/// An open trace. Its SQLite connection is the analyzer's alone: callers ask the analyses and
/// queries of this library (analyzer.hpp) for what they need, so that the internal tables can
/// change without breaking them. Users who want SQL use the stable views (docs/trace-schema.md)
/// with their own connection.
class Trace {
public:
    /// Opens `path` read-only; a clear error for missing, damaged, foreign or newer files. A
    /// packed trace (hpcprof pack) is opened through its unpacked copy (schema/packed_trace.hpp).
    static Result<Trace> open(const std::string& path);

    const std::string& path() const { return m_path; }

    /// Value of a metadata key, empty if absent.
    std::string metadata(const std::string& key) const;

private:
    friend struct detail::TraceAccess;
    Trace() = default;
    sqlite3* db() const { return m_db.get(); }
    const std::string& file() const { return m_file; }
    std::shared_ptr<const schema::UnpackedTrace> m_unpacked; ///< kept while the trace is open
    schema::DbHandle m_db;
    std::string m_path;
    std::string m_file; ///< the file SQLite reads: the path, or a packed trace's unpacked copy
};

} // namespace hpcprof::analyzer

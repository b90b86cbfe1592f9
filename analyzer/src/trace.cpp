// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/trace.hpp"

namespace hpcprof::analyzer {

Result<Trace> Trace::open(const std::string& path) {
    auto db = schema::openTraceReadOnly(path);
    if (!db) return db.status();
    Trace t;
    t.m_db = std::move(db.value());
    t.m_path = path;
    return t;
}

std::string Trace::metadata(const std::string& key) const {
    schema::Statement s(db(), "SELECT value FROM metadata WHERE key = ?");
    s.bind(1, key);
    return s.step() ? s.text(0) : std::string();
}

} // namespace hpcprof::analyzer

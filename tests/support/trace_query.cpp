// SPDX-License-Identifier: MIT
#include "trace_query.hpp"

#include <stdexcept>

namespace hpcprof::test {

TraceQuery::TraceQuery(const std::string& path) {
    auto db = schema::openTraceReadOnly(path);
    if (!db) throw std::runtime_error(db.status().message());
    m_db = std::move(db.value());
}

int64_t TraceQuery::scalar(const std::string& sql) const {
    schema::Statement s(m_db.get(), sql);
    if (!s.valid()) throw std::runtime_error(s.error().message());
    return s.step() ? s.int64(0) : 0;
}

std::string TraceQuery::text(const std::string& sql) const {
    schema::Statement s(m_db.get(), sql);
    if (!s.valid()) throw std::runtime_error(s.error().message());
    return s.step() ? s.text(0) : std::string();
}

std::vector<std::string> TraceQuery::rows(const std::string& sql) const {
    schema::Statement s(m_db.get(), sql);
    if (!s.valid()) throw std::runtime_error(s.error().message());
    std::vector<std::string> out;
    while (s.step()) {
        std::string row;
        int n = sqlite3_column_count(s.get());
        for (int i = 0; i < n; ++i) {
            if (i) row += '|';
            row += s.text(i);
        }
        out.push_back(row);
    }
    return out;
}

} // namespace hpcprof::test

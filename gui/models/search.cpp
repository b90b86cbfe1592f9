// SPDX-License-Identifier: MIT
#include "models/search.hpp"

#include <QRegularExpression>
#include <algorithm>
#include <unordered_set>

#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::gui {

Result<SearchResult> searchEvents(const TraceData& data, const Filter& filter, size_t limit) {
    auto traceR = threadTrace(data);
    if (!traceR) return traceR.status();
    const analyzer::Trace& trace = **traceR;
    QRegularExpression re;
    if (filter.regex) {
        re.setPattern(filter.text);
        if (!re.isValid()) return Status::error("invalid regular expression: " + re.errorString().toStdString());
    }
    std::unordered_set<int64_t> names;
    const bool anyName = filter.text.isEmpty();
    if (!anyName) {
        schema::Statement s(trace.db(), "SELECT id, value FROM string");
        while (s.step()) {
            QString v = QString::fromStdString(s.text(1));
            bool hit = filter.regex ? re.match(v).hasMatch() : v.contains(filter.text, Qt::CaseInsensitive);
            if (hit) names.insert(s.int64(0));
        }
        if (!s.error().ok()) return s.error();
    }
    SearchResult out;
    if (!anyName && names.empty()) return out;
    schema::Statement ev(trace.db(), "SELECT id, ts, dur, name_id, category_id FROM event WHERE id BETWEEN ? AND ?");
    for (const auto& t : data.index.tracks()) {
        if (!t.firstEventId || !t.lastEventId) continue;
        const int64_t rank = data.rankOf(t.processId);
        if (rank < filter.rankMin && (filter.rankMin > 0)) continue;
        if (filter.rankMax >= 0 && (rank < 0 || rank > filter.rankMax)) continue;
        ev.reset();
        ev.bind(1, *t.firstEventId);
        ev.bind(2, *t.lastEventId);
        while (ev.step()) {
            if (!anyName && !names.count(ev.int64(3))) continue;
            unsigned cls = unsigned(data.index.categoryClass(ev.int64(4)));
            if (!(filter.classMask & (1u << cls))) continue;
            ++out.total;
            if (out.matches.size() < limit) out.matches.push_back({ev.int64(0), t.id, ev.int64(1), ev.int64(2)});
        }
        if (!ev.error().ok()) return ev.error();
    }
    std::sort(out.matches.begin(), out.matches.end(),
              [](const SearchMatch& a, const SearchMatch& b) { return a.ts != b.ts ? a.ts < b.ts : a.eventId < b.eventId; });
    return out;
}

} // namespace hpcprof::gui

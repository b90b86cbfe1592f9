// SPDX-License-Identifier: MIT
#include "models/search.hpp"

#include <QRegularExpression>

#include "hpcprof/analyzer/event_query.hpp"

namespace hpcprof::gui {

Result<SearchResult> searchEvents(const TraceData& data, const Filter& filter, size_t limit) {
    auto traceR = threadTrace(data);
    if (!traceR) return traceR.status();
    QRegularExpression re;
    if (filter.regex) {
        re.setPattern(filter.text);
        if (!re.isValid()) return Status::error("invalid regular expression: " + re.errorString().toStdString());
    }
    analyzer::EventFilter f;
    if (!filter.text.isEmpty())
        f.nameMatches = [&](const std::string& name) {
            QString v = QString::fromStdString(name);
            return filter.regex ? re.match(v).hasMatch() : v.contains(filter.text, Qt::CaseInsensitive);
        };
    f.classMask = filter.classMask;
    f.trackMatches = [&](const analyzer::TrackInfo& t) {
        const int64_t rank = data.rankOf(t.processId);
        if (rank < filter.rankMin && filter.rankMin > 0) return false;
        return !(filter.rankMax >= 0 && (rank < 0 || rank > filter.rankMax));
    };
    f.limit = limit;
    auto found = analyzer::findEvents(**traceR, data.index, f);
    if (!found) return found.status();
    SearchResult out;
    out.total = found->total;
    out.matches.reserve(found->hits.size());
    for (const auto& h : found->hits) out.matches.push_back({h.eventId, h.trackId, h.ts, h.dur});
    return out;
}

} // namespace hpcprof::gui

// SPDX-License-Identifier: MIT
#include "models/event_lookup.hpp"

#include "hpcprof/analyzer/event_query.hpp"
#include "models/format.hpp"

namespace hpcprof::gui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }
} // namespace

Result<EventDetails> lookupEvent(const TraceData& data, int64_t eventId, size_t maxRelated) {
    auto traceR = threadTrace(data);
    if (!traceR) return traceR.status();
    auto found = analyzer::eventDetails(**traceR, data.index, eventId, maxRelated);
    if (!found) return found.status();
    const analyzer::EventDetails& e = *found;
    EventDetails d;
    d.eventId = e.eventId;
    d.trackId = e.trackId;
    d.ts = e.ts;
    d.dur = e.dur;
    d.category = qs(data.index.categoryName(e.categoryId));
    d.className = QString::fromLatin1(analyzer::eventClassName(data.index.categoryClass(e.categoryId)));
    d.name = qs(data.index.string(e.nameId));
    d.depth = e.depth;
    d.bytes = e.bytes;
    if (e.objectId >= 0) d.file = qs(data.index.objectName(e.objectId));
    d.peer = e.peer;
    if (e.communicatorId >= 0)
        if (const auto* c = data.index.communicator(e.communicatorId)) d.communicator = qs(c->key);
    d.seq = e.seq;
    d.correlationId = e.correlationId;
    d.count = e.count;
    if (const analyzer::TrackInfo* track = data.track(d.trackId)) {
        d.track = qs(track->name);
        d.processId = track->processId;
        d.rank = data.rankOf(track->processId);
    }
    for (const auto& [k, v] : e.fields) d.extra.emplace_back(qs(k), qs(v));
    for (const auto& r : e.related) {
        RelatedEvent out;
        out.eventId = r.eventId;
        out.trackId = r.trackId;
        out.ts = r.ts;
        out.dur = r.dur;
        out.name = qs(data.index.string(r.nameId));
        out.relation = qs(r.relation);
        if (const auto* t = data.track(r.trackId)) out.rank = data.rankOf(t->processId);
        d.related.push_back(out);
    }
    return d;
}

QString detailsHtml(const EventDetails& d) {
    QString h;
    auto row = [&h](const QString& k, const QString& v) {
        h += QStringLiteral("<tr><td><b>%1</b></td><td>%2</td></tr>").arg(k.toHtmlEscaped(), v);
    };
    h += QStringLiteral("<table cellspacing=2>");
    row(QStringLiteral("name"), d.name.toHtmlEscaped());
    row(QStringLiteral("category"), d.category + QStringLiteral(" (") + d.className + QStringLiteral(")"));
    row(QStringLiteral("rank"), d.rank >= 0 ? QString::number(d.rank) : QStringLiteral("(not a rank)"));
    row(QStringLiteral("track"), d.track.toHtmlEscaped());
    row(QStringLiteral("start"), formatDuration(d.ts));
    row(QStringLiteral("duration"), formatDuration(d.dur));
    if (d.bytes >= 0) row(QStringLiteral("bytes"), formatBytes(d.bytes) + QStringLiteral(" (%1)").arg(d.bytes));
    if (d.peer >= 0) row(QStringLiteral("peer"), QString::number(d.peer));
    if (!d.communicator.isEmpty())
        row(QStringLiteral("communicator"), d.communicator.toHtmlEscaped() + QStringLiteral(" #%1").arg(d.seq));
    if (!d.file.isEmpty()) row(QStringLiteral("file"), d.file.toHtmlEscaped());
    if (d.correlationId >= 0) row(QStringLiteral("correlation"), QString::number(d.correlationId));
    if (d.count > 1) row(QStringLiteral("folded calls"), QString::number(d.count));
    for (const auto& [k, v] : d.extra) row(k, v.toHtmlEscaped());
    h += QStringLiteral("</table>");
    if (!d.related.empty()) {
        h += QStringLiteral("<p><b>Correlated events</b></p><ul>");
        for (const auto& r : d.related)
            h += QStringLiteral("<li>%1: <a href=\"event:%2\">%3</a> (rank %4, %5, %6)</li>")
                     .arg(r.relation, QString::number(r.eventId), r.name.toHtmlEscaped(),
                          r.rank >= 0 ? QString::number(r.rank) : QStringLiteral("-"), formatDuration(r.ts),
                          formatDuration(r.dur));
        h += QStringLiteral("</ul>");
    }
    return h;
}

} // namespace hpcprof::gui

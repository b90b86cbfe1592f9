// SPDX-License-Identifier: MIT
#include "models/event_lookup.hpp"

#include "hpcprof/schema/sqlite.hpp"
#include "models/format.hpp"

namespace hpcprof::gui {

namespace {
QString qs(const std::string& s) { return QString::fromStdString(s); }

void addRelated(const TraceData& data, const analyzer::Trace& trace, schema::Statement& s, const QString& relation,
                int64_t self, size_t maxRelated, std::vector<RelatedEvent>& out) {
    while (s.step() && out.size() < maxRelated) {
        if (s.int64(0) == self) continue;
        RelatedEvent r;
        r.eventId = s.int64(0);
        r.trackId = s.int64(1);
        r.ts = s.int64(2);
        r.dur = s.int64(3);
        r.name = qs(data.index.string(s.int64(4)));
        r.relation = relation;
        if (const auto* t = data.track(r.trackId)) r.rank = data.rankOf(t->processId);
        out.push_back(r);
    }
    (void)trace;
}
} // namespace

Result<EventDetails> lookupEvent(const TraceData& data, int64_t eventId, size_t maxRelated) {
    auto traceR = threadTrace(data);
    if (!traceR) return traceR.status();
    const analyzer::Trace& trace = **traceR;
    schema::Statement s(trace.db(), "SELECT id, track_id, ts, dur, category_id, name_id, depth, bytes, object_id,"
                                    " peer, communicator_id, seq, correlation_id, COALESCE(count, 1)"
                                    " FROM event WHERE id = ?");
    s.bind(1, eventId);
    if (!s.step()) return s.error().ok() ? Status::error("no event " + std::to_string(eventId)) : s.error();
    auto opt = [&](int c) { return s.isNull(c) ? int64_t(-1) : s.int64(c); };
    EventDetails d;
    d.eventId = s.int64(0);
    d.trackId = s.int64(1);
    d.ts = s.int64(2);
    d.dur = s.int64(3);
    d.category = qs(data.index.categoryName(s.int64(4)));
    d.className = QString::fromLatin1(analyzer::eventClassName(data.index.categoryClass(s.int64(4))));
    d.name = qs(data.index.string(s.int64(5)));
    d.depth = s.int64(6);
    d.bytes = opt(7);
    if (!s.isNull(8)) d.file = qs(data.index.objectName(s.int64(8)));
    d.peer = opt(9);
    const int64_t comm = opt(10);
    if (comm >= 0)
        if (const auto* c = data.index.communicator(comm)) d.communicator = qs(c->key);
    d.seq = opt(11);
    d.correlationId = opt(12);
    d.count = s.int64(13);
    const analyzer::TrackInfo* track = data.track(d.trackId);
    if (track) {
        d.track = qs(track->name);
        d.processId = track->processId;
        d.rank = data.rankOf(track->processId);
    }

    schema::Statement det(trace.db(), "SELECT offset, errno, fd, tag FROM event_detail WHERE event_id = ?");
    det.bind(1, eventId);
    if (det.step()) {
        const char* names[] = {"offset", "errno", "fd", "tag"};
        for (int c = 0; c < 4; ++c)
            if (!det.isNull(c)) d.extra.emplace_back(QString::fromLatin1(names[c]), QString::number(det.int64(c)));
    }
    schema::Statement args(trace.db(), "SELECT key, value FROM event_arg WHERE event_id = ? ORDER BY key");
    args.bind(1, eventId);
    while (args.step()) d.extra.emplace_back(qs(args.text(0)), qs(args.text(1)));

    // Correlated work lives in the same process: scan only that process's tracks' id ranges
    // (there is deliberately no index on event).
    if (d.correlationId >= 0 && track) {
        schema::Statement c(trace.db(), "SELECT id, track_id, ts, dur, name_id FROM event"
                                        " WHERE id BETWEEN ? AND ? AND correlation_id = ? ORDER BY ts");
        for (const auto* t : data.index.tracksOf(track->processId)) {
            if (!t->firstEventId || !t->lastEventId) continue;
            c.reset();
            c.bind(1, *t->firstEventId);
            c.bind(2, *t->lastEventId);
            c.bind(3, d.correlationId);
            QString rel = (track->kind == analyzer::TrackKind::GpuStream) ? QStringLiteral("launched by")
                                                                           : QStringLiteral("launched");
            if (t->kind == track->kind) rel = QStringLiteral("same correlation");
            addRelated(data, trace, c, rel, d.eventId, maxRelated, d.related);
        }
    }
    if (comm >= 0 && d.seq >= 0) {
        // The same instance on the other members: communicator ids are per trace and the
        // instance number matches across members.
        schema::Statement c(trace.db(), "SELECT id, track_id, ts, dur, name_id FROM event"
                                        " WHERE communicator_id = ? AND seq = ? ORDER BY ts");
        c.bind(1, comm);
        c.bind(2, d.seq);
        addRelated(data, trace, c, QStringLiteral("same collective"), d.eventId, maxRelated, d.related);
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

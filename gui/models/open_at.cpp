// SPDX-License-Identifier: MIT
#include "models/open_at.hpp"

#include <algorithm>

#include "hpcprof/analyzer/analyze.hpp"

namespace hpcprof::gui {

namespace {

Status bad(const QString& message) { return Status::error(message.toStdString()); }

} // namespace

Result<OpenAt> parseOpenAt(const QString& window, const QString& event, const QString& finding) {
    const int given = int(!window.isEmpty()) + int(!event.isEmpty()) + int(!finding.isEmpty());
    if (given > 1) return bad(QStringLiteral("--window, --event and --finding exclude each other"));
    OpenAt at;
    if (!window.isEmpty()) {
        auto w = analyzer::parseWindow(window.toStdString());
        if (!w || w->kind != analyzer::WindowSpec::Kind::TimeRange)
            return bad(QStringLiteral("bad --window '%1' (want T0:T1, e.g. 1.5s:2s)").arg(window));
        at.window = TimeWindow{w->begin, w->end};
        at.option = QStringLiteral("--window ") + window;
    }
    if (!event.isEmpty()) {
        bool ok = false;
        const qlonglong id = event.toLongLong(&ok);
        if (!ok || id < 0) return bad(QStringLiteral("bad --event '%1' (want an event id, e.g. 42)").arg(event));
        at.event = id;
        at.option = QStringLiteral("--event ") + event;
    }
    if (!finding.isEmpty()) {
        at.finding = finding;
        at.option = QStringLiteral("--finding ") + finding;
    }
    return at;
}

TimeWindow eventView(int64_t ts, int64_t dur) {
    const int64_t span = std::max<int64_t>(3 * std::max<int64_t>(dur, 0), 10'000);
    const int64_t mid = ts + std::max<int64_t>(dur, 0) / 2;
    return {mid - span / 2, mid - span / 2 + span};
}

} // namespace hpcprof::gui

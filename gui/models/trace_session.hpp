// SPDX-License-Identifier: MIT
// An open trace and every question the GUI asks about it. Each question runs on a worker thread
// (QtConcurrent on the session's pool; each worker keeps its own read-only connection) and the
// answer comes back as a signal on the UI thread, in the style of Hotspot's PerfParser. Answers
// to a superseded question (an older search, a previous trace) are dropped.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <functional>

#include "models/analysis_models.hpp"
#include "models/event_lookup.hpp"
#include "models/search.hpp"
#include "models/trace_data.hpp"

namespace hpcprof::gui {

class TraceSession : public QObject {
    Q_OBJECT
public:
    explicit TraceSession(QObject* parent = nullptr);
    ~TraceSession() override;

    /// Opens `path`: opened() (then analysisReady()) or openFailed().
    void open(const QString& path);
    /// The same for a path as bytes (a command-line argument): file names need not be UTF-8,
    /// which a QString cannot carry.
    void open(const std::string& path);
    TraceDataPtr data() const { return m_data; }
    AnalysisPtr analysis() const { return m_analysis; }
    bool analysisRunning() const { return m_analysisRunning; }

    void lookup(int64_t eventId);
    void search(const Filter& filter);
    /// Per-class totals of a time range: the analyzer's attribution with a time window.
    void rangeTotals(TimeWindow window);
    /// Where events are: the hull of their times and their tracks (finding evidence).
    void locate(const std::vector<int64_t>& eventIds);

    /// Runs the event loop until `done()` holds or `ms` pass (tests, screenshots).
    static bool waitFor(const std::function<bool()>& done, int ms);

signals:
    void opened(hpcprof::gui::TraceDataPtr data);
    void openFailed(const QString& message);
    void analysisReady(hpcprof::gui::AnalysisPtr analysis);
    void analysisFailed(const QString& message);
    void eventDetailsReady(const hpcprof::gui::EventDetails& details);
    /// Event `eventId` could not be read (no such event): `message` says why.
    void lookupFailed(qint64 eventId, const QString& message);
    void searchReady(const hpcprof::gui::SearchResult& result);
    void searchFailed(const QString& message);
    void rangeTotalsReady(hpcprof::gui::TimeWindow window, hpcprof::gui::AnalysisPtr analysis);
    void rangeTotalsFailed(const QString& message);
    void located(hpcprof::gui::TimeWindow hull, const std::vector<int64_t>& trackIds);

private:
    template <typename T, typename Job, typename Done>
    void runJob(Job job, Done done);

    QThreadPool m_pool;
    TraceDataPtr m_data;
    AnalysisPtr m_analysis;
    bool m_analysisRunning = false;
    uint64_t m_openGen = 0, m_lookupGen = 0, m_searchGen = 0, m_rangeGen = 0, m_locateGen = 0;
};

} // namespace hpcprof::gui

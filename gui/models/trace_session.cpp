// SPDX-License-Identifier: MIT
#include <QFile>
#include "models/trace_session.hpp"

#include <QElapsedTimer>
#include <QEventLoop>
#include <QFutureWatcher>
#include <QTimer>
#include <QtConcurrent>
#include <algorithm>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/event_query.hpp"

namespace hpcprof::gui {

namespace {
/// A worker's answer: a value or a message (QFuture wants default-constructible results).
template <typename T> struct Outcome {
    T value{};
    QString error;
};
template <typename T> Outcome<T> fromResult(Result<T> r) {
    Outcome<T> o;
    if (r)
        o.value = std::move(*r);
    else
        o.error = QString::fromStdString(r.status().message());
    return o;
}

struct Located {
    TimeWindow hull;
    std::vector<int64_t> tracks;
};
} // namespace

TraceSession::TraceSession(QObject* parent) : QObject(parent) {
    // One thread can be busy with the whole-trace analysis for seconds; the other keeps
    // answering clicks and searches.
    m_pool.setMaxThreadCount(2);
    m_pool.setExpiryTimeout(-1);
}

TraceSession::~TraceSession() { m_pool.waitForDone(); }

template <typename T, typename Job, typename Done>
void TraceSession::runJob(Job job, Done done) {
    auto* watcher = new QFutureWatcher<Outcome<T>>(this);
    connect(watcher, &QFutureWatcher<Outcome<T>>::finished, this, [watcher, done] {
        Outcome<T> o = watcher->result();
        watcher->deleteLater();
        done(o.value, o.error);
    });
    watcher->setFuture(QtConcurrent::run(&m_pool, [job] { return fromResult<T>(job()); }));
}

void TraceSession::open(const QString& path) { open(QFile::encodeName(path).toStdString()); }

void TraceSession::open(const std::string& p) {
    const uint64_t gen = ++m_openGen;
    m_data.reset();
    m_analysis.reset();
    m_analysisRunning = false;
    runJob<TraceDataPtr>([p] { return loadTraceData(p); }, [this, gen](TraceDataPtr data, const QString& error) {
        if (gen != m_openGen) return;
        if (!data) {
            emit openFailed(error);
            return;
        }
        m_data = data;
        m_analysisRunning = true;
        emit opened(data);
        runJob<AnalysisPtr>(
            [data]() -> Result<AnalysisPtr> {
                auto trace = threadTrace(*data);
                if (!trace) return trace.status();
                auto a = analyzer::analyzeTrace(**trace);
                if (!a) return a.status();
                return AnalysisPtr(std::make_shared<analyzer::Analysis>(std::move(*a)));
            },
            [this, gen](AnalysisPtr a, const QString& error) {
                if (gen != m_openGen) return;
                m_analysisRunning = false;
                if (!a) {
                    emit analysisFailed(error);
                    return;
                }
                m_analysis = a;
                emit analysisReady(a);
            });
    });
}

void TraceSession::lookup(int64_t eventId) {
    if (!m_data) return;
    const uint64_t gen = ++m_lookupGen;
    TraceDataPtr data = m_data;
    runJob<EventDetails>([data, eventId] { return lookupEvent(*data, eventId); },
                         [this, gen, eventId](const EventDetails& d, const QString& error) {
                             if (gen != m_lookupGen) return;
                             if (error.isEmpty())
                                 emit eventDetailsReady(d);
                             else
                                 emit lookupFailed(eventId, error);
                         });
}

void TraceSession::search(const Filter& filter) {
    if (!m_data) return;
    const uint64_t gen = ++m_searchGen;
    TraceDataPtr data = m_data;
    runJob<SearchResult>([data, filter] { return searchEvents(*data, filter); },
                         [this, gen](const SearchResult& r, const QString& error) {
                             if (gen != m_searchGen) return;
                             if (!error.isEmpty())
                                 emit searchFailed(error);
                             else
                                 emit searchReady(r);
                         });
}

void TraceSession::rangeTotals(TimeWindow window) {
    if (!m_data) return;
    const uint64_t gen = ++m_rangeGen;
    TraceDataPtr data = m_data;
    runJob<AnalysisPtr>(
        [data, window]() -> Result<AnalysisPtr> {
            auto trace = threadTrace(*data);
            if (!trace) return trace.status();
            analyzer::AnalysisOptions o;
            o.window.kind = analyzer::WindowSpec::Kind::TimeRange;
            o.window.begin = window.begin;
            o.window.end = window.end;
            auto a = analyzer::analyzeTrace(**trace, o);
            if (!a) return a.status();
            return AnalysisPtr(std::make_shared<analyzer::Analysis>(std::move(*a)));
        },
        [this, gen, window](AnalysisPtr a, const QString& error) {
            if (gen != m_rangeGen) return;
            if (!a)
                emit rangeTotalsFailed(error);
            else
                emit rangeTotalsReady(window, a);
        });
}

void TraceSession::locate(const std::vector<int64_t>& eventIds) {
    if (!m_data || eventIds.empty()) return;
    const uint64_t gen = ++m_locateGen;
    TraceDataPtr data = m_data;
    runJob<Located>(
        [data, eventIds]() -> Result<Located> {
            auto trace = threadTrace(*data);
            if (!trace) return trace.status();
            auto places = analyzer::locateEvents(**trace, eventIds);
            if (!places) return places.status();
            Located l{{INT64_MAX, INT64_MIN}, {}};
            for (const auto& p : *places) {
                l.hull.begin = std::min(l.hull.begin, p.ts);
                l.hull.end = std::max(l.hull.end, p.ts + std::max<int64_t>(1, p.dur));
                if (std::find(l.tracks.begin(), l.tracks.end(), p.trackId) == l.tracks.end())
                    l.tracks.push_back(p.trackId);
            }
            if (l.tracks.empty()) return Status::error("the finding's events are not in the trace");
            return l;
        },
        [this, gen](const Located& l, const QString& error) {
            if (gen == m_locateGen && error.isEmpty()) emit located(l.hull, l.tracks);
        });
}

bool TraceSession::waitFor(const std::function<bool()>& done, int ms) {
    QElapsedTimer t;
    t.start();
    while (!done() && t.elapsed() < ms) {
        QEventLoop loop;
        QTimer::singleShot(10, &loop, &QEventLoop::quit);
        loop.exec();
    }
    return done();
}

} // namespace hpcprof::gui

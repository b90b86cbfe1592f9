// SPDX-License-Identifier: MIT
// GUI benchmark on the offscreen platform, with the GUI's own pieces (TraceData load, lane
// layout, asynchronous TimelineFetcher, TimelinePainter into a 1600x1000 image):
//  - first paint: from opening the trace until the first frame with data is painted (the first
//    chunk of lanes), and until every visible lane is;
//  - a scripted sequence (zoom from the whole run down to ~1 us, pan, zoom back out) at a
//    60 Hz input rate: per-frame paint time (what the UI thread spends per frame; fetches run
//    on the worker meanwhile), the same frame painted again (repaint: a fetch chunk arriving, the
//    pointer moving) and the worker's fetch times;
//  - jumps to uncached views (whole run ... 10 us): input until a frame shows their data;
//  - peak RSS of the process.
// Modes: `after` (default: the class mipmap, ranks folded to their summary rows when they do not
// fit, as hpcprof-gui shows a trace) and `before` (--before: events only, every lane expanded, as
// before the mipmap); --cold deletes the mipmap's cache file first, so its build is measured.
// --mipmap RUNS times the mipmap's cold build alone, the old way and the new, side by side.
// --keep times what `hpcprof run` and `hpcprof merge` add after the conversion: building the class
// summary and writing it next to the trace (analyzer::keepClassSummary), and the file's size.
// The trace comes from bench/analyzer's generator (run_gui_bench.sh). Results: docs/performance.md.
#include <malloc.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/resource.h>

#include <QElapsedTimer>
#include <QEventLoop>
#include <QGuiApplication>
#include <QImage>
#include <QPainter>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "models/class_mipmap.hpp"
#include "models/lane_layout.hpp"
#include "models/timeline_fetcher.hpp"
#include "models/timeline_painter.hpp"
#include "models/trace_data.hpp"

using namespace hpcprof::gui;

namespace {
constexpr int kWidth = 1600, kHeight = 1000;

double pct(std::vector<double> v, double p) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(p * double(v.size() - 1) + 0.5))];
}

/// CPU time of the calling thread, in ms.
double threadCpuMs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

void spin(int ms) {
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
}
/// What the first paint took, in ms: the worker's first fetch, and from opening the trace until
/// the first frame with data and until the frame with every visible lane.
struct FirstPaint {
    double firstFetchMs, firstPaintMs, fullPaintMs;
};

/// The timeline widget's pieces on one trace, driven by a script instead of a person.
class Bench {
public:
    Bench(TraceDataPtr data, bool mipmap) : m_data(std::move(data)), m_mipmap(mipmap) {
        m_layout.build(*m_data);
        if (mipmap) m_layout.fitTo(kHeight);
        m_fetcher.setUseMipmap(mipmap);
        m_axis.setBounds(m_data->bounds);
        m_axis.setWidth(kWidth - TimelinePainter::kGutter);
        m_fetcher.setTrace(m_data);
        QObject::connect(&m_fetcher, &TimelineFetcher::dataReady, [this] {
            for (const auto& [track, draw] : m_fetcher.data()->tracks) m_layout.growRows(track, draw->maxDepth + 1);
        });
    }

    /// `clock` started when the trace was opened.
    FirstPaint firstPaint(const QElapsedTimer& clock) {
        FirstPaint f;
        request();
        // First paint: the first frame with data (the first chunk of lanes, top of the view).
        while (!m_fetcher.data() && m_fetcher.busy()) spin(1);
        f.firstFetchMs = m_fetcher.data() ? m_fetcher.data()->fetchMs : 0;
        paint();
        f.firstPaintMs = double(clock.nsecsElapsed()) / 1e6;
        // Every visible lane painted.
        m_fetcher.waitUntilIdle(600000);
        paint();
        f.fullPaintMs = double(clock.nsecsElapsed()) / 1e6;
        return f;
    }

    /// The script: 64 zoom steps of 0.8 at the centre (1/0.8^64 ~ 1.6e6x), 40 pans of 10 %, 64
    /// steps back out; one input every 16 ms, as a person holding W, D and S would produce.
    void runScript() {
        QObject::connect(&m_fetcher, &TimelineFetcher::dataReady, [this] { m_fetchMs.push_back(m_fetcher.data()->fetchMs); });
        auto step = [&](auto&& change) {
            change();
            request();
            m_frames.push_back(paint());
            m_frameCpu.push_back(m_lastPaintCpuMs); // the work itself: what the wall time is without waiting for a core
            m_repaints.push_back(paint()); // the same view again: what a fetch chunk or the pointer costs
            spin(16);
        };
        const double mid = m_axis.width() / 2;
        for (int i = 0; i < 64; ++i) step([&] { m_axis.zoom(0.8, mid); });
        m_deepestSpan = m_axis.window().span();
        for (int i = 0; i < 40; ++i) step([&] { m_axis.panPixels(0.1 * m_axis.width()); });
        for (int i = 0; i < 64; ++i) step([&] { m_axis.zoom(1.25, mid); });
        m_fetcher.waitUntilIdle(600000);
    }

    /// Jumps to views with nothing cached (a finding, a search hit): input until the frame that
    /// shows the new view's data, per view (10 us, 100 us, 1/256, 1/16 of the run, all of it).
    std::vector<double> jumpToFreshViews() {
        std::vector<double> fresh;
        const TimeWindow b = m_data->bounds;
        for (int64_t span : {int64_t(10'000), int64_t(100'000), b.span() / 256, b.span() / 16, b.span()}) {
            const int64_t c = b.begin + b.span() / 3;
            QElapsedTimer t;
            t.start();
            m_axis.setWindow({c - span / 2, c - span / 2 + span});
            request();
            m_fetcher.waitUntilIdle(600000);
            paint();
            fresh.push_back(double(t.nsecsElapsed()) / 1e6);
        }
        return fresh;
    }

    void printResults(double loadMs, const FirstPaint& first, const std::vector<double>& fresh) const {
        const int fetches = int(m_fetchMs.size());
        rusage ru{};
        getrusage(RUSAGE_SELF, &ru);
        std::printf("mode=%s ", m_mipmap ? "after" : "before");
        std::printf("events=%lld tracks=%zu load_ms=%.1f first_chunk_fetch_ms=%.1f first_paint_ms=%.1f all_lanes_ms=%.1f\n",
                    (long long)m_data->events, m_data->index.tracks().size(), loadMs, first.firstFetchMs,
                    first.firstPaintMs, first.fullPaintMs);
        std::printf("mode=%s ", m_mipmap ? "after" : "before");
        std::printf("frames=%zu paint_median_ms=%.2f paint_p95_ms=%.2f paint_max_ms=%.2f repaint_median_ms=%.2f "
                    "paint_cpu_median_ms=%.2f deepest_span_ns=%lld\n",
                    m_frames.size(), pct(m_frames, 0.5), pct(m_frames, 0.95), pct(m_frames, 1.0), pct(m_repaints, 0.5),
                    pct(m_frameCpu, 0.5), (long long)m_deepestSpan);
        // RSS includes the trace's memory-mapped pages (SQLite mmap, shared with the page cache);
        // the heap in use is the GUI's own memory: draw lists, caches, the trace's small tables.
        std::printf("mode=%s ", m_mipmap ? "after" : "before");
        std::printf("fetches=%d fetch_median_ms=%.1f fetch_max_ms=%.1f peak_rss_mb=%.1f heap_in_use_mb=%.1f\n", fetches,
                    pct(m_fetchMs, 0.5), pct(m_fetchMs, 1.0), double(ru.ru_maxrss) / 1024.0,
                    double(mallinfo2().uordblks) / (1024.0 * 1024.0));
        std::printf("mode=%s ", m_mipmap ? "after" : "before");
        std::printf("jump_to_fresh_frame_ms 10us=%.0f 100us=%.0f 1/256=%.0f 1/16=%.0f whole=%.0f\n", fresh[0], fresh[1],
                    fresh[2], fresh[3], fresh[4]);
    }

private:
    void request() {
        // The same lanes the timeline widget asks for: the visible ones and half a screen more.
        const int y0 = m_scrollY - kHeight / 2, y1 = m_scrollY + kHeight + kHeight / 2;
        if (m_mipmap) m_fetcher.setGroups(m_layout.visibleGroups(y0, y1));
        m_fetcher.request(m_axis.window(), m_axis.nsPerPixel(), m_layout.visibleTracks(y0, y1),
                          m_layout.visibleCounters(y0, y1));
    }

    /// Paints one frame; its paint time in ms.
    double paint() {
        QElapsedTimer t;
        t.start();
        const double cpu0 = threadCpuMs();
        QPainter p(&m_image);
        PaintState st;
        st.scrollY = m_scrollY;
        TimelinePainter::paintLanes(p, m_area, m_axis, m_layout, *m_data, m_fetcher.data().get(), st);
        m_lastPaintCpuMs = threadCpuMs() - cpu0;
        return double(t.nsecsElapsed()) / 1e6;
    }

    TraceDataPtr m_data;
    bool m_mipmap;
    LaneLayout m_layout;
    TimeAxis m_axis;
    TimelineFetcher m_fetcher;
    QImage m_image{kWidth, kHeight, QImage::Format_RGB32};
    const QRect m_area{0, 0, kWidth, kHeight};
    int m_scrollY = 0;
    std::vector<double> m_frames, m_frameCpu, m_repaints, m_fetchMs;
    double m_lastPaintCpuMs = 0;
    int64_t m_deepestSpan = 0;
};

/// Whether two mipmaps hold the same shares for every group and track of `a`.
bool sameShares(const ClassMipmap& a, const ClassMipmap& b) {
    for (const auto* maps : {&a.tracks, &a.groups}) {
        const auto& other = maps == &a.tracks ? b.tracks : b.groups;
        for (const auto& [id, strip] : *maps)
            if (!other.count(id) || other.at(id)->share != strip->share) return false;
    }
    return true;
}

/// The class mipmap's cold build, side by side in one process: rank by rank through window
/// queries (as before), then one sweep per track on 1 worker and on the default workers; medians
/// of `runs` builds each, and whether the three give the same shares.
int benchMipmapBuild(const TraceDataPtr& data, int runs) {
    auto q = threadClassShares(*data);
    if (!q) return std::fprintf(stderr, "gui_bench: %s\n", q.status().message().c_str()), 1;
    const TimeWindow w = data->bounds;
    std::vector<double> ms[3];
    std::shared_ptr<ClassMipmap> last[3];
    for (int run = 0; run < runs; ++run)
        for (int k = 0; k < 3; ++k) {
            auto m = k == 0 ? buildClassMipmapByRank(**q, data->index, w.begin, w.end)
                            : buildClassMipmap(**q, data->index, w.begin, w.end, k == 1 ? 1 : 0);
            if (!m) return std::fprintf(stderr, "gui_bench: %s\n", m.status().message().c_str()), 1;
            ms[k].push_back((*m)->buildMs);
            last[k] = *m;
        }
    const bool same = sameShares(*last[0], *last[1]) && sameShares(*last[0], *last[2]);
    std::printf("mipmap_build events=%lld ranks=%zu tracks=%zu runs=%d by_rank_ms=%.0f sweep_1_thread_ms=%.0f "
                "sweep_threads_ms=%.0f threads=%u identical=%s\n",
                (long long)data->events, last[0]->groups.size(), last[0]->tracks.size(), runs, pct(ms[0], 0.5),
                pct(ms[1], 0.5), pct(ms[2], 0.5), std::min(8u, QThread::idealThreadCount() > 0 ? unsigned(QThread::idealThreadCount()) : 1u),
                same ? "yes" : "NO");
    return same ? 0 : 3;
}

/// What the convert paths add: analyzer::keepClassSummary on the trace, timed, and the file's size.
int benchKeep(const char* path) {
    QElapsedTimer t;
    t.start();
    hpcprof::Status st = hpcprof::analyzer::keepClassSummary(path);
    const double ms = double(t.nsecsElapsed()) / 1e6;
    if (!st.ok()) return std::fprintf(stderr, "gui_bench: %s\n", st.message().c_str()), 1;
    struct stat sb {};
    ::stat(mipmapCachePath(path).c_str(), &sb);
    std::printf("keep_summary_ms=%.0f summary_bytes=%lld\n", ms, (long long)sb.st_size);
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QGuiApplication app(argc, argv);
    bool before = false, cold = false, keep = false;
    int mipmapRuns = 0;
    const char* path = nullptr;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--before") before = true;
        else if (a == "--cold") cold = true;
        else if (a == "--keep") keep = true;
        else if (a == "--mipmap" && i + 1 < argc) mipmapRuns = std::atoi(argv[++i]);
        else path = argv[i];
    }
    if (!path) {
        std::fprintf(stderr, "usage: gui_bench [--before] [--cold] [--keep] [--mipmap RUNS] TRACE\n");
        return 2;
    }
    if (keep) return benchKeep(path);
    if (cold) std::remove(mipmapCachePath(path).c_str());
    QElapsedTimer clock;
    clock.start();
    auto loaded = loadTraceData(path);
    if (!loaded) {
        std::fprintf(stderr, "gui_bench: %s\n", loaded.status().message().c_str());
        return 1;
    }
    TraceDataPtr data = *loaded;
    if (mipmapRuns > 0) return benchMipmapBuild(data, mipmapRuns);
    const double loadMs = double(clock.nsecsElapsed()) / 1e6;
    Bench bench(data, !before);
    const FirstPaint first = bench.firstPaint(clock);
    bench.runScript();
    const std::vector<double> fresh = bench.jumpToFreshViews();
    bench.printResults(loadMs, first, fresh);
    return 0;
}

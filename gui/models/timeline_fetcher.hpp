// SPDX-License-Identifier: MIT
// Keeps the timeline's draw lists fresh without ever blocking the UI thread: requests go to a
// one-thread pool (one trace connection, jobs in order), results come back through a queued
// signal. The fetched window is 3x the visible span at a power-of-two resolution, so panning
// and small zooms reuse it (Perfetto's buffered bounds); requests made while a fetch runs are
// coalesced into the latest one. A fetch runs in chunks of a few lanes, top lanes first, and each
// chunk is shown as it arrives (lanes not fetched yet keep their previous data), so the first
// lanes paint long before the last one is read; a newer request cancels the older one's
// remaining chunks.
#pragma once

#include <QObject>
#include <QThreadPool>
#include <atomic>
#include <memory>
#include <optional>

#include "models/timeline_fetch.hpp"

namespace hpcprof::gui {

class TimelineFetcher : public QObject {
    Q_OBJECT
public:
    explicit TimelineFetcher(QObject* parent = nullptr);
    ~TimelineFetcher() override;

    void setTrace(TraceDataPtr data);
    /// Makes sure data covering `visible` at the resolution for `nsPerPixel` for these lanes is
    /// (or will be) available. Returns true if a fetch was started or queued.
    bool request(TimeWindow visible, double nsPerPixel, const std::vector<int64_t>& tracks,
                 const std::vector<int64_t>& counters);
    /// Summary rows to fetch with every request (process ids of the visible group rows).
    void setGroups(std::vector<int64_t> processIds) { m_wantGroups = std::move(processIds); }
    /// false: no class mipmap and no summary rows (events only; the benchmark's "before").
    void setUseMipmap(bool on) { m_mipmap = on; }
    /// The latest fetched data (may cover an older window while a fetch runs).
    TimelineDataPtr data() const { return m_data; }
    bool busy() const { return m_busy; }
    /// Blocks (running the event loop) until no fetch is running or queued, at most `ms`.
    bool waitUntilIdle(int ms);

signals:
    void dataReady();
    void fetchFailed(const QString& message);
    void idle();

private:
    bool covers(const FetchRequest& have, TimeWindow visible, int64_t res,
                const std::vector<int64_t>& tracks, const std::vector<int64_t>& counters) const;
    void start(FetchRequest req);
    void chunkFinished(TimelineDataPtr data, QString error, uint64_t session, uint64_t generation);

    /// Lanes per chunk: small enough that the first paint waits for little, large enough that
    /// the per-chunk merge and repaint stay negligible.
    static constexpr size_t kChunkTracks = 4;
    /// Summary rows per chunk: from the mipmap they cost nothing, finer ones a read per rank.
    static constexpr size_t kChunkGroups = 32;
    std::vector<int64_t> m_wantGroups;
    bool m_mipmap = true;

    QThreadPool m_pool;
    TraceDataPtr m_trace;
    TimelineDataPtr m_data;
    std::optional<FetchRequest> m_haveReq, m_inflight, m_pending;
    bool m_busy = false;
    size_t m_chunksLeft = 0;
    uint64_t m_generation = 0;
    /// The generation workers should still compute; older chunks return at once.
    std::shared_ptr<std::atomic<uint64_t>> m_wanted = std::make_shared<std::atomic<uint64_t>>(0);
};

} // namespace hpcprof::gui

// SPDX-License-Identifier: MIT
// The per-rank pass of the analysis and its worker threads. A rank's pass touches only its own
// tracks, so ranks are handed out to workers one at a time (an atomic counter: big ranks do not
// stall the others), each worker reading through its own read-only SQLite connection.
#include "rank_pass.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <optional>
#include <system_error>
#include <thread>

#include "attribution.hpp"
#include "trace_access.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "steps.hpp"
#include "thresholds.hpp"
#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::analyzer::detail {

namespace {

using schema::Category;
constexpr int32_t cat(Category c) { return int32_t(c); }
using threshold::kShortGpuGapNs;
using threshold::kShortKernelNs;
using threshold::kSmallRequestBytes;
/// More workers than this bring nothing: the pass is bound by SQLite decoding per core, and each
/// worker maps the file and keeps one rank's interval sets.
constexpr unsigned kMaxWorkers = 8;

std::string lower(std::string s) {
    for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

/// Name facts computed once per string id.
enum NameFlag : uint8_t {
    kStepName = 1,
    kFp32Gemm = 2,
    kSyncCopyApi = 4,
    kSend = 8,
    kRecv = 16,
    kNonBlocking = 32,
    kIoDataCall = 64, ///< ioDirection() != None
};

uint8_t classifyName(const std::string& name) {
    std::string l = lower(name);
    uint8_t f = 0;
    if (contains(l, "step")) f |= kStepName;
    bool gemm = contains(l, "sgemm") ||
                (contains(l, "gemm") && (contains(l, "f32") || contains(l, "fp32") || contains(l, "float")));
    static const char* kMixed[] = {"tf32", "f16", "fp16", "bf16", "h884", "h1688", "h16816", "tensorop", "i8"};
    for (const char* m : kMixed)
        if (contains(l, m)) gemm = false;
    if (gemm) f |= kFp32Gemm;
    if ((l.rfind("cudamemcpy", 0) == 0 || l.rfind("cumemcpy", 0) == 0) && !contains(l, "async"))
        f |= kSyncCopyApi;
    if (!contains(l, "sendrecv")) {
        if (contains(l, "send")) f |= kSend;
        else if (contains(l, "recv")) f |= kRecv;
    }
    if (l.rfind("mpi_i", 0) == 0) f |= kNonBlocking;
    if (ioDirection(name) != IoDirection::None) f |= kIoDataCall;
    return f;
}

/// Example event ids per fact, collected in a fixed array (no map lookup per event) and moved
/// into RankFacts::examples at the end of the pass.
enum Example { kExSyncCopy, kExFp32Gemm, kExSmallComm, kExSmallIo, kExPageableCopy, kExSync, kExampleCount };
constexpr const char* kExampleKeys[kExampleCount] = {"sync_copy",  "fp32_gemm",     "small_comm",
                                                     "small_io",   "pageable_copy", "sync"};

/// One worker's reader: its connection's prepared side-table statements and name cache.
class RankScanner {
public:
    RankScanner(const Trace& trace, const PassContext& ctx)
        : m_trace(trace), m_ix(*ctx.index), m_ctx(ctx),
          // Per-track range reads of the side tables (primary keys start with event_id), so no
          // per-event lookups: memcpy memory kinds from event_arg, message tags from event_detail.
          m_pageableRange(detail::db(trace), "SELECT event_id FROM event_arg WHERE event_id BETWEEN ? AND ?"
                                      " AND key IN ('src_kind', 'dst_kind') AND value = 'pageable'"),
          m_tagRange(detail::db(trace), "SELECT event_id, tag FROM event_detail WHERE event_id BETWEEN ? AND ?"
                                 " AND tag IS NOT NULL") {}

    void run(const RankUnit& u, RankPass& out);

private:
    uint8_t flagsOf(int64_t nameId) {
        if (nameId >= 0 && size_t(nameId) < m_flags.size() && m_flags[size_t(nameId)] >= 0)
            return uint8_t(m_flags[size_t(nameId)]);
        const uint8_t f = classifyName(m_ix.string(nameId));
        if (nameId >= 0 && nameId < (int64_t(1) << 31)) {
            if (size_t(nameId) >= m_flags.size()) m_flags.resize(size_t(nameId) + 1, -1);
            m_flags[size_t(nameId)] = f;
        }
        return f;
    }
    template <typename Fn>
    void readRange(schema::Statement& st, const TrackInfo& t, Fn&& fn) {
        if (!t.firstEventId || !t.lastEventId) return;
        st.reset();
        st.bind(1, *t.firstEventId);
        st.bind(2, *t.lastEventId);
        while (st.step()) fn(st);
    }

    const Trace& m_trace;
    const TraceIndex& m_ix;
    const PassContext& m_ctx;
    schema::Statement m_pageableRange, m_tagRange;
    std::vector<int16_t> m_flags; ///< by name id, -1 = not classified yet
    TimelineSets m_sets;
};

void RankScanner::run(const RankUnit& u, RankPass& out) {
    const int64_t r = u.rank;
    RankBreakdown& rb = out.breakdown;
    rb.rank = r;
    rb.processId = u.processes.front()->id;
    rb.pid = u.processes.front()->pid;
    rb.host = u.processes.front()->host;
    rb.gpu = u.gpu;
    rb.recordingStoppedTs = u.recordingStoppedTs;
    rb.stopReason = u.stopReason;
    RankFacts& f = rb.facts;
    std::vector<int64_t> examples[kExampleCount];
    auto addExample = [&](Example k, int64_t id) {
        if (examples[k].size() < 3) examples[k].push_back(id);
    };
    // The interval sets are the pass's big allocations: reused from rank to rank, so their
    // memory is not returned to the system and faulted in again for every rank.
    TimelineSets& sets = m_sets;
    for (auto& s : sets.all) s.clear();
    for (auto& s : sets.reference) s.clear();
    sets.gpu = u.gpu;
    std::vector<CollectiveCall> cpuColl, gpuColl;
    std::map<std::string, int32_t> stepDepth; // family -> depth of its outermost ranges
    const IntervalSet& win = u.window;
    const int64_t winBegin = win.empty() ? 0 : win.items().front().begin;
    const int64_t winEnd = win.empty() ? 0 : win.items().back().end;
    // The rank's run: events that start before it or end after it are damage (clock or data);
    // the whole-run window would cut them silently.
    const int64_t runBegin = u.active.empty() ? 0 : u.active.items().front().begin;
    const int64_t runEnd = u.active.empty() ? 0 : u.active.items().back().end;
    auto inWindow = [&](const EventRecord& e) {
        const int64_t end = std::max(e.end(), e.ts + 1); // instants count at their ts
        if (e.ts >= winEnd || end <= winBegin) return false;
        return win.items().size() == 1 || win.lengthIn(e.ts, end) > 0;
    };

    std::vector<std::pair<int64_t, int64_t>> tags; // (event id, tag)
    std::vector<int64_t> pageableCopies;           // sorted event ids
    for (const TrackInfo* t : u.tracks) {
        const bool gpuTrack = t->kind == TrackKind::GpuStream;
        const bool ref = u.gpu ? gpuTrack : u.referenceTracks.count(t->id) > 0;
        pageableCopies.clear();
        if (gpuTrack) readRange(m_pageableRange, *t, [&](auto& st) { pageableCopies.push_back(st.int64(0)); });
        else readRange(m_tagRange, *t, [&](auto& st) { tags.emplace_back(st.int64(0), st.int64(1)); });
        std::sort(pageableCopies.begin(), pageableCopies.end());
        Status st = scanTrack(m_trace, m_ix, *t, out.quality, [&](const EventRecord& e) {
            ++rb.events;
            if (e.ts < runBegin || e.end() > runEnd) ++out.quality.outsideRun;
            const int ci = int(e.cls);
            if (e.cls != EventClass::Annotation) {
                sets.all[ci].add(e.ts, e.end());
                if (ref) sets.reference[ci].add(e.ts, e.end());
            }
            if (!inWindow(e)) return;
            const uint8_t flags = flagsOf(e.nameId);
            switch (e.cls) {
            case EventClass::Annotation:
                if ((e.categoryId == cat(Category::UserRange) || e.categoryId == cat(Category::Nvtx)) &&
                    (flags & kStepName)) {
                    std::string family = stepFamilyName(m_ix.string(e.nameId));
                    auto d = stepDepth.find(family);
                    // Only the outermost ranges of a family are steps.
                    if (d == stepDepth.end() || e.depth < d->second) {
                        stepDepth[family] = e.depth;
                        out.stepRanges[family].clear();
                        d = stepDepth.find(family);
                    }
                    if (d->second == e.depth) out.stepRanges[family].push_back({e.ts, e.end()});
                }
                if (e.categoryId == cat(Category::CudaApi) && (flags & kSyncCopyApi)) {
                    ++f.syncCopies;
                    f.syncCopyNs += e.dur;
                    addExample(kExSyncCopy, e.id);
                }
                break;
            case EventClass::Compute:
                if (gpuTrack) {
                    ++f.kernels;
                    f.kernelNs += e.dur;
                    if (e.dur < kShortKernelNs) ++f.shortKernels;
                    if (flags & kFp32Gemm) {
                        ++f.fp32GemmKernels;
                        f.fp32GemmNs += e.dur;
                        addExample(kExFp32Gemm, e.id);
                    }
                    out.topKernels.add(e.nameId, e.dur, -1);
                }
                break;
            case EventClass::Communication: {
                if (e.categoryId == cat(Category::GpuCommKernel)) out.topKernels.add(e.nameId, e.dur, -1);
                const bool apiCall = e.categoryId != cat(Category::GpuCommKernel);
                if (apiCall) {
                    f.commCalls += e.count;
                    if (e.bytes >= 0 && e.bytes < kSmallRequestBytes) {
                        f.smallCommCalls += e.count;
                        f.smallCommNs += e.dur;
                        addExample(kExSmallComm, e.id);
                    }
                }
                if (e.communicatorId >= 0 && e.seq >= 0) {
                    CollectiveCall c{r, e.communicatorId, e.seq, e.ts, e.end(), e.bytes, e.nameId, e.id};
                    (gpuTrack ? gpuColl : cpuColl).push_back(c);
                    if (!gpuTrack || e.categoryId == cat(Category::GpuCommKernel))
                        out.topCollectives.add(e.nameId, e.dur, e.bytes);
                } else if (e.categoryId == cat(Category::MpiP2p) && e.peer >= 0 && (flags & (kSend | kRecv))) {
                    P2pCall m;
                    m.rank = r;
                    m.peer = e.peer;
                    m.ts = e.ts;
                    m.end = e.end();
                    m.bytes = e.bytes;
                    m.eventId = e.id;
                    m.send = flags & kSend;
                    m.blocking = !(flags & kNonBlocking);
                    m.communicatorId = e.communicatorId;
                    out.messages.push_back(m);
                }
                break;
            }
            case EventClass::Io: {
                out.topFiles.add(e.objectId, e.dur, e.bytes);
                bool dataCall = (e.categoryId == cat(Category::PosixIo) || e.categoryId == cat(Category::MpiIo)) &&
                                (flags & kIoDataCall);
                if (dataCall) {
                    f.ioCalls += e.count;
                    if (e.bytes > 0) f.ioBytes += e.bytes;
                    if (e.bytes >= 0 && e.bytes < kSmallRequestBytes) {
                        f.smallIoCalls += e.count;
                        f.smallIoNs += e.dur;
                        addExample(kExSmallIo, e.id);
                    }
                }
                break;
            }
            case EventClass::Memory:
                if (e.categoryId == cat(Category::GpuMemcpy) &&
                    std::binary_search(pageableCopies.begin(), pageableCopies.end(), e.id)) {
                    ++f.pageableCopies;
                    f.pageableCopyNs += e.dur;
                    addExample(kExPageableCopy, e.id);
                }
                break;
            case EventClass::Sync:
                f.syncCalls += e.count;
                f.syncNs += e.dur;
                addExample(kExSync, e.id);
                break;
            }
        });
        if (!st.ok()) {
            out.status = st;
            return;
        }
    }
    for (int k = 0; k < kExampleCount; ++k)
        if (!examples[k].empty()) f.examples[kExampleKeys[k]] = std::move(examples[k]);
    // Message tags were read per track from event_detail above (event_id is its primary key).
    std::sort(tags.begin(), tags.end());
    for (P2pCall& m : out.messages) {
        auto it = std::lower_bound(tags.begin(), tags.end(), std::make_pair(m.eventId, INT64_MIN));
        m.tag = it != tags.end() && it->first == m.eventId ? it->second : -2;
    }
    // A rank's collective instance is its GPU kernel when the GPU side carries the instance
    // (NCCL), else its host call.
    out.collectives = std::move(gpuColl.empty() ? cpuColl : gpuColl);

    sets.normalize();
    Attribution a = attribute(sets, win, u.active);
    std::copy(std::begin(a.exclusive), std::end(a.exclusive), std::begin(rb.exclusive));
    rb.windowNs = a.windowNs;
    rb.activeNs = a.activeNs;
    rb.commTotalNs = a.commTotalNs;
    rb.commOverlappedNs = a.commOverlappedNs;
    rb.ioTotalNs = a.ioTotalNs;
    rb.ioOverlappedNs = a.ioOverlappedNs;
    rb.memoryTotalNs = a.memoryTotalNs;
    rb.syncTotalNs = a.syncTotalNs;
    rb.gpuIdleNs = a.gpuIdleNs;
    rb.overview = overviewStrip(a, m_ctx.jobBegin, m_ctx.jobEnd, m_ctx.overviewBuckets);

    if (u.gpu) {
        IntervalSet busy;
        for (int c = 0; c < kEventClassCount; ++c)
            if (c != int(EventClass::Annotation)) busy = busy.unite(sets.reference[c]);
        busy = busy.intersect(win);
        if (!busy.empty()) {
            f.gpuActiveBegin = busy.items().front().begin;
            f.gpuActiveEnd = busy.items().back().end;
            IntervalSet gaps = busy.complementIn(f.gpuActiveBegin, f.gpuActiveEnd).intersect(win);
            for (const auto& g : gaps.items()) {
                ++f.gpuGaps;
                f.gpuGapNs += g.length();
                if (g.length() < kShortGpuGapNs) {
                    ++f.shortGpuGaps;
                    f.shortGpuGapNs += g.length();
                }
            }
        }
    }
}

} // namespace

void TopAccumulator::merge(const TopAccumulator& other) {
    for (const auto& [key, o] : other.items) {
        TopItem& t = items[key];
        t.count += o.count;
        t.totalNs += o.totalNs;
        t.maxNs = std::max(t.maxNs, o.maxNs);
        t.bytes += o.bytes;
    }
}

std::vector<TopItem> TopAccumulator::top(size_t n, const std::function<std::string(int64_t)>& name) const {
    std::vector<std::pair<int64_t, TopItem>> v(items.begin(), items.end());
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) {
        return a.second.totalNs != b.second.totalNs ? a.second.totalNs > b.second.totalNs : a.first < b.first;
    });
    std::vector<TopItem> out;
    for (size_t i = 0; i < v.size() && i < n; ++i) {
        out.push_back(v[i].second);
        out.back().name = name(v[i].first);
    }
    return out;
}

void runRankPasses(const Trace& trace, const PassContext& ctx, const std::vector<const RankUnit*>& units,
                   int threads, std::vector<RankPass>& out) {
    out.clear();
    out.resize(units.size());
    unsigned want = threads > 0 ? unsigned(threads) : std::min(kMaxWorkers, std::thread::hardware_concurrency());
    want = std::max(1u, std::min<unsigned>(want, unsigned(units.size())));

    // The caller's connection serves the first worker; the others get their own (a Trace is
    // used by one thread at a time).
    std::vector<Trace> extra;
    for (unsigned i = 1; i < want; ++i) {
        auto t = Trace::open(trace.path());
        if (!t) break; // fewer workers; the result is the same
        extra.push_back(std::move(t.value()));
    }
    std::atomic<size_t> next{0};
    auto work = [&](const Trace& conn) {
        RankScanner scanner(conn, ctx);
        for (size_t i = next.fetch_add(1); i < units.size(); i = next.fetch_add(1)) scanner.run(*units[i], out[i]);
    };
    std::vector<std::thread> workers;
    workers.reserve(extra.size());
    for (const Trace& conn : extra) {
        try {
            workers.emplace_back(work, std::cref(conn));
        } catch (const std::system_error&) {
            break; // no thread to be had: the remaining workers take its share
        }
    }
    work(trace);
    for (auto& w : workers) w.join();
}

} // namespace hpcprof::analyzer::detail

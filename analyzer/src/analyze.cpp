// SPDX-License-Identifier: MIT
// The analysis driver: resolves ranks and the window, streams each rank's tracks once to build
// its interval sets and facts, then runs the cross-rank analyses and the advice rules. Memory
// is bounded by one rank's intervals plus the compact collective/message call lists.
#include "hpcprof/analyzer/analyze.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "hpcprof/analyzer/advice.hpp"
#include "hpcprof/analyzer/attribution.hpp"
#include "hpcprof/analyzer/counters.hpp"
#include "hpcprof/analyzer/io_summary.hpp"
#include "hpcprof/analyzer/pop_metrics.hpp"
#include "hpcprof/analyzer/steps.hpp"
#include "hpcprof/analyzer/trace_index.hpp"
#include "hpcprof/analyzer/wait_states.hpp"
#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::analyzer {

namespace {

using schema::Category;
constexpr int32_t cat(Category c) { return int32_t(c); }
constexpr int64_t kSmallBytes = 64 * 1024;
constexpr int64_t kLargeBytes = 1024 * 1024;
constexpr int64_t kShortKernelNs = 10'000;
constexpr int64_t kShortGapNs = 20'000;
constexpr double kDefaultLinkBandwidth = 12.5e9;

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
    return f;
}

bool globMatch(const std::string& pattern, const std::string& name) {
    if (!pattern.empty() && pattern.back() == '*')
        return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
    return name == pattern;
}

struct RankUnit {
    int64_t rank = 0;
    std::vector<const ProcessInfo*> processes;
    std::vector<const TrackInfo*> tracks;
    std::set<int64_t> referenceTracks; ///< CPU main-thread tracks
    bool gpu = false;
    IntervalSet active;
    IntervalSet window;
};

void addExample(RankFacts& f, const char* key, int64_t id) {
    auto& v = f.examples[key];
    if (v.size() < 3) v.push_back(id);
}

struct TopAccumulator {
    std::unordered_map<int64_t, TopItem> items;
    void add(int64_t key, int64_t dur, int64_t bytes) {
        TopItem& t = items[key];
        ++t.count;
        t.totalNs += dur;
        t.maxNs = std::max(t.maxNs, dur);
        if (bytes > 0) t.bytes += bytes;
    }
    std::vector<TopItem> top(size_t n, const std::function<std::string(int64_t)>& name) const {
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
};

/// First/last event times of a track by point lookups on its id range (no scan).
void trackBounds(const Trace& trace, const TrackInfo& t, int64_t& begin, int64_t& end) {
    if (!t.firstEventId || !t.lastEventId) return;
    schema::Statement s(trace.db(), "SELECT ts, dur FROM event WHERE id = ?");
    s.bind(1, *t.firstEventId);
    if (s.step()) begin = std::min(begin, s.int64(0));
    s.reset();
    s.bind(1, *t.lastEventId);
    if (s.step()) end = std::max(end, s.int64(0) + std::max<int64_t>(0, s.int64(1)));
}

} // namespace

const char* severityName(Severity s) {
    switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Critical: return "critical";
    }
    return "info";
}

bool parseSeverity(const std::string& text, Severity& out) {
    if (text == "info") out = Severity::Info;
    else if (text == "warning") out = Severity::Warning;
    else if (text == "critical") out = Severity::Critical;
    else return false;
    return true;
}

Result<WindowSpec> parseWindow(const std::string& text) {
    WindowSpec w;
    w.text = text;
    if (text.empty()) return w;
    if (text.rfind("range:", 0) == 0) {
        w.kind = WindowSpec::Kind::RangeName;
        w.pattern = text.substr(6);
        if (w.pattern.empty()) return Status::error("--window range: needs a range name");
        return w;
    }
    auto colon = text.find(':');
    if (colon == std::string::npos)
        return Status::error("--window '" + text + "': expected T0:T1 or range:NAME");
    auto parseTime = [](const std::string& s, int64_t fallback) -> std::optional<int64_t> {
        if (s.empty()) return fallback;
        size_t pos = 0;
        double v = 0;
        try {
            v = std::stod(s, &pos);
        } catch (...) {
            return std::nullopt;
        }
        std::string unit = s.substr(pos);
        double scale = unit == "" || unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : -1;
        if (scale < 0 || v < 0) return std::nullopt;
        return int64_t(std::llround(v * scale));
    };
    auto b = parseTime(text.substr(0, colon), 0);
    auto e = parseTime(text.substr(colon + 1), INT64_MAX);
    if (!b || !e || *e <= *b)
        return Status::error("--window '" + text + "': expected T0:T1 with T0 < T1 (units ns, us, ms, s)");
    w.kind = WindowSpec::Kind::TimeRange;
    w.begin = *b;
    w.end = *e;
    return w;
}

Result<Analysis> analyzeTrace(const Trace& trace, const AnalysisOptions& options) {
    auto loaded = TraceIndex::load(trace);
    if (!loaded) return loaded.status();
    const TraceIndex& ix = *loaded;
    Analysis an;
    an.tracePath = trace.path();
    an.window = options.window;

    // --- Ranks: processes with a rank (grouped, an exec'ed process keeps its rank), else every
    // process on its own, numbered in process order. ---
    std::map<int64_t, RankUnit> units;
    bool anyRank = std::any_of(ix.processes().begin(), ix.processes().end(),
                               [](const ProcessInfo& p) { return p.rank.has_value(); });
    int64_t ordinal = 0;
    for (const auto& p : ix.processes()) {
        if (anyRank && !p.rank) continue;
        int64_t r = anyRank ? *p.rank : ordinal++;
        units[r].rank = r;
        units[r].processes.push_back(&p);
    }
    if (units.empty()) return Status::error(trace.path() + ": the trace has no processes to analyse");

    int64_t jobBegin = INT64_MAX, jobEnd = INT64_MIN;
    for (auto& [r, u] : units) {
        for (const ProcessInfo* p : u.processes) {
            int64_t b = p->startTs, e = p->endTs.value_or(p->startTs);
            const TrackInfo* busiest = nullptr;
            bool mainFound = false;
            for (const TrackInfo* t : ix.tracksOf(p->id)) {
                u.tracks.push_back(t);
                trackBounds(trace, *t, b, e);
                if (t->kind == TrackKind::GpuStream) u.gpu = true;
                if (t->kind != TrackKind::CpuThread) continue;
                if (t->tid && *t->tid == p->pid) {
                    u.referenceTracks.insert(t->id);
                    mainFound = true;
                }
                if (!busiest || t->eventCount > busiest->eventCount) busiest = t;
            }
            if (!mainFound && busiest) u.referenceTracks.insert(busiest->id);
            u.active.add(b, e);
            jobBegin = std::min(jobBegin, b);
            jobEnd = std::max(jobEnd, e);
        }
        u.active.normalize();
    }

    // --- Window. ---
    IntervalSet jobWindow;
    switch (options.window.kind) {
    case WindowSpec::Kind::Whole: jobWindow = IntervalSet::single(jobBegin, jobEnd); break;
    case WindowSpec::Kind::TimeRange:
        jobWindow = IntervalSet::single(std::max(jobBegin, options.window.begin),
                                        std::min(jobEnd, options.window.end));
        if (jobWindow.empty())
            return Status::error("window " + options.window.text + " does not overlap the trace (" +
                                 std::to_string(jobBegin) + ".." + std::to_string(jobEnd) + " ns)");
        break;
    case WindowSpec::Kind::RangeName: {
        std::vector<int64_t> nameIds;
        schema::Statement names(trace.db(), "SELECT id, value FROM string");
        while (names.step())
            if (globMatch(options.window.pattern, names.text(1))) nameIds.push_back(names.int64(0));
        std::map<int64_t, int64_t> processToRank;
        for (auto& [r, u] : units)
            for (auto* p : u.processes) processToRank[p->id] = r;
        IntervalSet all;
        if (!nameIds.empty()) {
            std::string list;
            for (int64_t id : nameIds) list += (list.empty() ? "" : ",") + std::to_string(id);
            schema::Statement s(trace.db(),
                                "SELECT e.ts, e.dur, t.process_id FROM event e JOIN track t ON t.id = e.track_id"
                                " JOIN category c ON c.id = e.category_id WHERE c.class = 'annotation'"
                                " AND e.name_id IN (" + list + ")");
            while (s.step()) {
                int64_t b = s.int64(0), e = b + std::max<int64_t>(0, s.int64(1));
                all.add(b, e);
                auto it = processToRank.find(s.int64(2));
                if (it != processToRank.end()) units[it->second].window.add(b, e);
            }
            if (!s.error().ok()) return s.error();
        }
        all.normalize();
        if (all.empty())
            return Status::error("window " + options.window.text + ": no user or NVTX range named '" +
                                 options.window.pattern + "' in the trace");
        for (auto& [r, u] : units) {
            u.window.normalize();
            if (u.window.empty()) u.window = all; // ranks without their own ranges use everyone's
        }
        jobWindow = all;
        break;
    }
    }
    if (options.window.kind != WindowSpec::Kind::RangeName)
        for (auto& [r, u] : units) u.window = jobWindow;
    if (jobWindow.empty()) jobWindow = IntervalSet::single(0, 0);

    an.summary.windowBegin = jobWindow.empty() ? 0 : jobWindow.items().front().begin;
    an.summary.windowEnd = jobWindow.empty() ? 0 : jobWindow.items().back().end;
    an.summary.wallNs = an.summary.windowEnd - an.summary.windowBegin;

    // --- Name classification, once per string. ---
    std::unordered_map<int64_t, uint8_t> nameFlags;
    auto flagsOf = [&](int64_t nameId) {
        auto it = nameFlags.find(nameId);
        if (it != nameFlags.end()) return it->second;
        uint8_t f = classifyName(ix.string(nameId));
        nameFlags.emplace(nameId, f);
        return f;
    };

    double link = options.linkBandwidthBytesPerS;
    if (link <= 0) {
        try {
            std::string m = trace.metadata("link_bandwidth_bytes_per_s");
            if (!m.empty()) link = std::stod(m);
        } catch (...) {
        }
    }
    if (link <= 0) link = kDefaultLinkBandwidth;
    an.linkBandwidthBytesPerS = link;

    ScanQuality quality;
    std::vector<CollectiveCall> collectives;
    std::vector<P2pCall> messages;
    std::map<std::string, std::map<int64_t, std::vector<Interval>>> stepRanges; // family -> rank
    std::map<std::string, std::map<int64_t, int32_t>> stepDepth;
    TopAccumulator topKernels, topCollectives, topFiles;
    // Per-track range reads of the side tables (primary keys start with event_id), so no
    // per-event lookups: memcpy memory kinds from event_arg, message tags from event_detail.
    schema::Statement pageableRange(trace.db(), "SELECT event_id FROM event_arg WHERE event_id BETWEEN ? AND ?"
                                                " AND key IN ('src_kind', 'dst_kind') AND value = 'pageable'");
    schema::Statement tagRange(trace.db(), "SELECT event_id, tag FROM event_detail WHERE event_id BETWEEN ? AND ?"
                                           " AND tag IS NOT NULL");
    auto readRange = [](schema::Statement& st, const TrackInfo& t, auto&& fn) {
        if (!t.firstEventId || !t.lastEventId) return;
        st.reset();
        st.bind(1, *t.firstEventId);
        st.bind(2, *t.lastEventId);
        while (st.step()) fn(st);
    };

    // --- Per rank: one pass over its tracks. ---
    for (auto& [r, u] : units) {
        RankBreakdown rb;
        rb.rank = r;
        rb.processId = u.processes.front()->id;
        rb.pid = u.processes.front()->pid;
        rb.host = u.processes.front()->host;
        rb.gpu = u.gpu;
        RankFacts& f = rb.facts;
        TimelineSets sets;
        sets.gpu = u.gpu;
        std::vector<CollectiveCall> cpuColl, gpuColl;
        const IntervalSet& win = u.window;
        const int64_t winBegin = win.empty() ? 0 : win.items().front().begin;
        const int64_t winEnd = win.empty() ? 0 : win.items().back().end;
        auto inWindow = [&](const EventRecord& e) {
            const int64_t end = std::max(e.end(), e.ts + 1); // instants count at their ts
            if (e.ts >= winEnd || end <= winBegin) return false;
            return win.items().size() == 1 || win.lengthIn(e.ts, end) > 0;
        };
        const size_t firstMessage = messages.size();

        std::unordered_map<int64_t, int64_t> tags;
        for (const TrackInfo* t : u.tracks) {
            const bool gpuTrack = t->kind == TrackKind::GpuStream;
            const bool ref = u.gpu ? gpuTrack : u.referenceTracks.count(t->id) > 0;
            std::set<int64_t> pageableCopies;
            if (gpuTrack) readRange(pageableRange, *t, [&](auto& st) { pageableCopies.insert(st.int64(0)); });
            else readRange(tagRange, *t, [&](auto& st) { tags[st.int64(0)] = st.int64(1); });
            Status st = ix.scanTrack(trace, *t, quality, [&](const EventRecord& e) {
                ++rb.events;
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
                        std::string family = stepFamilyName(ix.string(e.nameId));
                        auto& depthOf = stepDepth[family];
                        auto d = depthOf.find(r);
                        // Only the outermost ranges of a family are steps.
                        if (d == depthOf.end() || e.depth < d->second) {
                            depthOf[r] = e.depth;
                            stepRanges[family][r].clear();
                        }
                        if (depthOf[r] == e.depth) stepRanges[family][r].push_back({e.ts, e.end()});
                    }
                    if (e.categoryId == cat(Category::CudaApi) && (flags & kSyncCopyApi)) {
                        ++f.syncCopies;
                        f.syncCopyNs += e.dur;
                        addExample(f, "sync_copy", e.id);
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
                            addExample(f, "fp32_gemm", e.id);
                        }
                        topKernels.add(e.nameId, e.dur, -1);
                    }
                    break;
                case EventClass::Communication: {
                    if (e.categoryId == cat(Category::GpuCommKernel)) topKernels.add(e.nameId, e.dur, -1);
                    const bool apiCall = e.categoryId != cat(Category::GpuCommKernel);
                    if (apiCall) {
                        f.commCalls += e.count;
                        if (e.bytes >= 0 && e.bytes < kSmallBytes) {
                            f.smallCommCalls += e.count;
                            f.smallCommNs += e.dur;
                            addExample(f, "small_comm", e.id);
                        }
                    }
                    if (e.communicatorId >= 0 && e.seq >= 0) {
                        CollectiveCall c{r, e.communicatorId, e.seq, e.ts, e.end(), e.bytes, e.nameId, e.id};
                        (gpuTrack ? gpuColl : cpuColl).push_back(c);
                        if (!gpuTrack || e.categoryId == cat(Category::GpuCommKernel))
                            topCollectives.add(e.nameId, e.dur, e.bytes);
                    } else if (e.categoryId == cat(Category::MpiP2p) && e.peer >= 0 &&
                               (flags & (kSend | kRecv))) {
                        P2pCall m;
                        m.rank = r;
                        m.peer = e.peer;
                        m.ts = e.ts;
                        m.end = e.end();
                        m.bytes = e.bytes;
                        m.eventId = e.id;
                        m.send = flags & kSend;
                        m.blocking = !(flags & kNonBlocking);
                        messages.push_back(m);
                    }
                    break;
                }
                case EventClass::Io: {
                    topFiles.add(e.objectId, e.dur, e.bytes);
                    bool dataCall = (e.categoryId == cat(Category::PosixIo) || e.categoryId == cat(Category::MpiIo)) &&
                                    ioDirection(ix.string(e.nameId)) != IoDirection::None;
                    if (dataCall) {
                        f.ioCalls += e.count;
                        if (e.bytes > 0) f.ioBytes += e.bytes;
                        if (e.bytes >= 0 && e.bytes < kSmallBytes) {
                            f.smallIoCalls += e.count;
                            f.smallIoNs += e.dur;
                            addExample(f, "small_io", e.id);
                        }
                    }
                    break;
                }
                case EventClass::Memory:
                    if (e.categoryId == cat(Category::GpuMemcpy)) {
                        if (pageableCopies.count(e.id)) {
                            ++f.pageableCopies;
                            f.pageableCopyNs += e.dur;
                            addExample(f, "pageable_copy", e.id);
                        }
                    }
                    break;
                case EventClass::Sync:
                    f.syncCalls += e.count;
                    f.syncNs += e.dur;
                    addExample(f, "sync", e.id);
                    break;
                }
            });
            if (!st.ok()) return st;
        }
        // Message tags were read per track from event_detail above.
        for (size_t i = firstMessage; i < messages.size(); ++i) {
            P2pCall& m = messages[i];
            auto it = tags.find(m.eventId);
            m.tag = it == tags.end() ? -2 : it->second;
        }
        // A rank's collective instance is its GPU kernel when the GPU side carries the
        // instance (NCCL), else its host call.
        auto& chosen = gpuColl.empty() ? cpuColl : gpuColl;
        collectives.insert(collectives.end(), chosen.begin(), chosen.end());

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
        rb.overview = overviewStrip(a, an.summary.windowBegin, an.summary.windowEnd, options.overviewBuckets);

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
                    if (g.length() < kShortGapNs) {
                        ++f.shortGpuGaps;
                        f.shortGpuGapNs += g.length();
                    }
                }
            }
        }
        an.ranks.push_back(std::move(rb));
    }

    // --- Cross-rank. ---
    std::vector<int64_t> rankIds;
    for (const auto& rb : an.ranks) rankIds.push_back(rb.rank);
    an.waits = computeWaitStates(collectives, messages, rankIds, [&](int64_t id) -> std::optional<int64_t> {
        const CommunicatorInfo* c = ix.communicator(id);
        return c ? c->size : std::nullopt;
    });
    an.pop = computePop(an.ranks, an.waits);

    // Large collectives: achieved bandwidth = bytes / (duration - wait).
    std::map<int64_t, size_t> rankIndex;
    for (size_t i = 0; i < an.ranks.size(); ++i) rankIndex[an.ranks[i].rank] = i;
    for (const auto& c : collectives) {
        if (c.bytes < kLargeBytes) continue;
        auto w = an.waits.waitByEvent.find(c.eventId);
        int64_t wait = w == an.waits.waitByEvent.end() ? 0 : w->second;
        RankFacts& f = an.ranks[rankIndex[c.rank]].facts;
        ++f.largeCollectives;
        f.largeCollectiveBytes += c.bytes;
        f.largeCollectiveTransferNs += std::max<int64_t>(0, c.end - c.ts - wait);
        addExample(f, "large_collective", c.eventId);
    }

    // Steps: the range family with the most instances, else the collective pattern.
    std::string bestFamily;
    size_t bestCount = 0;
    for (const auto& [family, byRank] : stepRanges) {
        size_t n = 0;
        for (const auto& [rr, v] : byRank) n += v.size();
        if (n > bestCount) {
            bestCount = n;
            bestFamily = family;
        }
    }
    an.steps = bestCount > 0 ? stepsFromRanges(stepRanges[bestFamily], bestFamily)
                             : stepsFromCollectives(collectives);

    // Job summary.
    JobSummary& js = an.summary;
    js.rankCount = int64_t(an.ranks.size());
    for (const auto& rb : an.ranks) {
        if (rb.gpu) ++js.gpuRankCount;
        js.events += rb.events;
        js.totalNs += rb.windowNs;
        for (int c = 0; c < kTimeClassCount; ++c) js.exclusive[c] += rb.exclusive[c];
        js.commTotalNs += rb.commTotalNs;
        js.commOverlappedNs += rb.commOverlappedNs;
        js.ioTotalNs += rb.ioTotalNs;
        js.ioOverlappedNs += rb.ioOverlappedNs;
    }

    an.topKernels = topKernels.top(options.topItems, [&](int64_t id) { return ix.string(id); });
    an.topCollectives = topCollectives.top(options.topItems, [&](int64_t id) { return ix.string(id); });
    an.topFiles = topFiles.top(options.topItems, [&](int64_t id) {
        return id < 0 ? std::string("(no file)") : ix.objectName(id);
    });

    // Data quality: the trace's own stats, then what this analysis met.
    {
        schema::Statement s(trace.db(), "SELECT name, severity, value, description FROM stats_view"
                                        " WHERE value != 0");
        while (s.step())
            an.warnings.push_back({s.text(0), s.int64(2), s.text(1) + ": " + s.text(3)});
    }
    auto warn = [&](const char* name, int64_t n, const char* what) {
        if (n > 0) an.warnings.push_back({name, n, what});
    };
    warn("negative_durations_read", quality.negativeDurations,
         "analysis: events with a negative duration were read as instants (dur 0)");
    warn("unsorted_events", quality.unsortedEvents,
         "analysis: events out of time order within their track (the attribution sorts them; timeline queries may miss some)");
    warn("tracks_without_id_range", quality.tracksWithoutIdRange,
         "analysis: tracks without an event id range were scanned by track id (slow)");
    warn("unknown_categories", quality.unknownCategories,
         "analysis: events of unknown categories were treated as annotations");
    warn("incomplete_collectives", an.waits.incompleteInstances,
         "analysis: collective instances missing members (not used for wait states)");
    warn("unmatched_messages", an.waits.unmatchedMessages,
         "analysis: point-to-point calls without a matching partner call");

    an.counters = analyzeCounters(trace, an);
    an.findings = runRules(an);
    return an;
}

} // namespace hpcprof::analyzer

// SPDX-License-Identifier: MIT
// The communication family's part of the analysis: every call of class communication (MPI,
// NCCL, sockets, verbs). Per rank: call counts and small-message facts, the collective calls
// (one per instance: the GPU kernel when the GPU side carries it, else the host call) and the
// point-to-point calls with their tags. Across ranks: the completions of non-blocking calls,
// the wait states (late senders and receivers, collective waits, stragglers), the facts of
// large collectives and the top collectives. Rules: exposed communication, small messages,
// stragglers, low collective bandwidth.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "family_analysis.hpp"
#include "forward_search.hpp"
#include "hpcprof/schema/raw/common.hpp"
#include "name_flags.hpp"
#include "rowid_table_pages.hpp"
#include "sort_unless_sorted.hpp"
#include "step_kernels.hpp"
#include "thresholds.hpp"
#include "small_call_floor.hpp"
#include "top_list.hpp"
#include "trace_access.hpp"
#include "wait_states.hpp"

namespace hpcprof::analyzer {

namespace advice {
std::vector<RuleSpec> communicationRules(); // communication_rules.cpp
}

namespace {

using schema::Category;
constexpr int32_t cat(Category c) { return int32_t(c); }

/// Calls on one communicator the agent did not see created.
struct UnknownCommunicatorUse {
    int64_t collectives = 0, messages = 0;
    std::optional<int64_t> size;
};

/// The communicator `id` when the agent did not see it created, else nullptr.
const CommunicatorInfo* unknownCommunicator(const TraceIndex& index, int64_t id) {
    const CommunicatorInfo* c = id >= 0 ? index.communicator(id) : nullptr;
    // Traces recorded before issue 19 keyed them "unmatched:<handle>".
    return c && (c->key.starts_with(schema::raw::kUnknownCommunicatorPrefix) ||
                 c->key.starts_with("unmatched:"))
               ? c
               : nullptr;
}

/// Per communicator the agent did not see created (by key: a stable order), its calls.
using UnknownCommunicators = std::map<std::string, UnknownCommunicatorUse>;

class CommunicationScan final : public RankScan {
public:
    CommunicationScan(const Trace& trace, const TraceIndex& index)
        // Message tags live in event_detail (event_id is its primary key): one range read per
        // CPU track instead of a lookup per message, below SQL as far as it gets.
        : m_trace(trace),
          m_tagRange(detail::db(trace), "SELECT event_id, tag FROM event_detail WHERE event_id BETWEEN ? AND ?"
                                        " AND tag IS NOT NULL"),
          m_completionRange(trackCompletionsQuery(trace)),
          m_index(index) {}

    void beginTrack(const TrackInfo& t, bool gpuTrack) override {
        m_outerCallEnd = INT64_MIN;
        if (gpuTrack) return;
        readCompletions(t);
        if (!t.firstEventId || !t.lastEventId) return;
        int64_t from = *t.firstEventId;
        if (!m_tagPagesTried) { // opened by the pass, and closed when it ends (finish)
            m_tagPages = detail::IntegerColumnPages::open(m_trace, "event_detail", "event_id", {"tag"});
            m_tagPagesTried = true;
        }
        if (m_tagPages) {
            const auto stop = m_tagPages->scan(from, *t.lastEventId, [&](int64_t id, const int64_t* v, const bool* null) {
                if (!null[0]) m_tags.emplace_back(id, v[0]);
            });
            if (!stop.damage.ok()) {
                if (status.ok()) status = stop.damage;
                return;
            }
            from = stop.resumeFrom;
            if (from > *t.lastEventId) return;
        }
        m_tagRange.reset();
        m_tagRange.bind(1, from);
        m_tagRange.bind(2, *t.lastEventId);
        while (m_tagRange.step()) m_tags.emplace_back(m_tagRange.int64(0), m_tagRange.int64(1));
    }

    void onEvent(const EventRecord& e, const EventContext& ctx) override {
        if (e.categoryId != cat(Category::GpuCommKernel)) { // API calls, not their GPU kernels
            countCall(e);
            addToTopCalls(e);
        }
        if (e.count > 1 && !ctx.gpuTrack) countPolling(e);
        keepForWaits(e, ctx);
    }

    /// GPU kernels without an instance, collective calls and point-to-point calls: what the
    /// wait states and the step kernels need.
    void keepForWaits(const EventRecord& e, const EventContext& ctx) {
        if (ctx.gpuTrack && e.categoryId == cat(Category::GpuCommKernel) && (e.communicatorId < 0 || e.seq < 0)) {
            commKernels.push_back({e.ts, e.end(), e.nameId, e.id}); // matched by when they end (step_kernels.hpp)
        } else if (e.communicatorId >= 0 && e.seq >= 0) {
            CollectiveCall c{0, e.communicatorId, e.seq, e.ts, e.end(), e.bytes, e.nameId, e.id};
            (ctx.gpuTrack ? m_gpuCollectives : m_cpuCollectives).push_back(c);
            if (!ctx.gpuTrack || e.categoryId == cat(Category::GpuCommKernel))
                topCollectives.add(e.nameId, e.dur, e.bytes);
        } else if (e.categoryId == cat(Category::MpiP2p) && e.peer >= 0 && (ctx.nameFlags & (kSend | kRecv))) {
            addMessage(e, ctx.nameFlags);
        }
    }

    void finish(const RankEnd& end) override {
        m_tagPages.reset(); // its file, read lock and page buffers (1.3 MB) go with the pass
        RankFacts& f = end.breakdown.facts;
        f.commCalls += m_commCalls;
        f.smallCommCalls += m_smallCalls;
        f.smallCommNs += m_smallNs;
        f.smallCommFloorNs += m_smallFloor.floorNs();
        m_smallFloor = {};
        if (!m_examples.empty()) f.examples["small_comm"] = std::move(m_examples);
        const int64_t rank = end.breakdown.rank;
        smallCallRank = rank;
        sortUnlessSorted(m_tags);
        auto byEvent = [](const std::pair<int64_t, int64_t>& tag, int64_t id) { return tag.first < id; };
        ForwardSearch<std::pair<int64_t, int64_t>, decltype(byEvent)> tags(m_tags, byEvent);
        for (P2pCall& m : messages) {
            m.rank = rank;
            const size_t i = tags.lowerBound(m.eventId);
            m.tag = i < m_tags.size() && m_tags[i].first == m.eventId ? m_tags[i].second : -2;
        }
        addCompletions(end.window);
        markUnknownCommunicators();
        // A rank's collective instance is its GPU kernel when the GPU side carries the instance
        // (NCCL), else its host call.
        collectives = std::move(m_gpuCollectives.empty() ? m_cpuCollectives : m_gpuCollectives);
        for (CollectiveCall& c : collectives) c.rank = rank;
        markSmallCalls();
        markCollectives(end.breakdown.facts);
        std::sort(commKernels.begin(), commKernels.end(),
                  [](const CommKernel& a, const CommKernel& b) { return a.ts < b.ts; });
        // Kept until the ranks are combined: only what combine() needs. The statement goes now:
        // it belongs to the worker's connection, which closes when the pass ends.
        m_tagRange = schema::Statement();
        m_completionRange = schema::Statement();
        // Kept at their size: they live until combine(), one set per rank, and growth leaves
        // up to half of a vector's storage unused.
        messages.shrink_to_fit();
        release(m_tags);
        release(m_cpuCollectives);
        release(m_gpuCollectives);
    }

    /// After finish(), until the fold writes them out as the rank's run (collective_runs.hpp):
    /// the rank's collective calls in scan order, and which are counted as small calls (their
    /// waits are set apart from the small calls' time; the messages carry their own mark:
    /// P2pCall::small, waitSmall).
    std::vector<CollectiveCall> collectives;
    std::vector<bool> smallCollectives;
    std::vector<CommKernel> commKernels;     ///< GPU communication kernels without an instance
    std::vector<P2pCall> messages;           ///< in scan order
    UnknownCommunicators unknownCommunicators; ///< the messages' and the collectives'
    Status status; ///< of reading the completions
    int64_t smallCallRank = 0;
    int64_t pollingNs = 0; ///< RankWait::pollingNs: in loops of unsuccessful probes
    TopAccumulator topCollectives;
    TopAccumulator topCalls; ///< outermost communication calls by name (mpiP's aggregate view)

private:
    /// A call inside another communication call (a PMPI call made by the library itself) is
    /// part of the outer one's time: counted once, as the outer call. A socket call nested in
    /// any call is the library's or the runtime's (the sockets of MPI_Init, which this scan
    /// does not see: it is setup), not the program's.
    void addToTopCalls(const EventRecord& e) {
        if (e.ts < m_outerCallEnd || (e.depth > 0 && e.categoryId == cat(Category::Socket))) return;
        m_outerCallEnd = e.end();
        topCalls.add(e.nameId, e.dur, e.bytes, e.count);
    }

    /// The completions whose completing call is on track `t` (the rank's waits and tests).
    void readCompletions(const TrackInfo& t) {
        if (!m_completionRange.valid()) return;
        m_completionRange.reset();
        m_completionRange.bind(1, t.firstEventId.value_or(0));
        m_completionRange.bind(2, t.lastEventId.value_or(INT64_MAX));
        m_completionRange.bind(3, t.id);
        Status st = readP2pCompletions(m_completionRange, m_completions);
        if (status.ok() && !st.ok()) status = st;
    }

    /// Non-blocking calls: the waits that completed them (mpi_completion) and the actual source
    /// of wildcard receives. Posts the scan did not see (MPI_Startall's requests) are added, but
    /// only where they touch the rank's window.
    void addCompletions(const IntervalSet& window) {
        const size_t firstAdded = applyP2pCompletions(m_completions, messages);
        release(m_completions);
        messages.erase(std::remove_if(messages.begin() + ptrdiff_t(firstAdded), messages.end(),
                                      [&](const P2pCall& m) {
                                          const int64_t end = std::max(m.end, m.waitEnd);
                                          return window.lengthIn(m.ts, std::max(end, m.ts + 1)) == 0;
                                      }),
                       messages.end());
    }

    /// Messages on communicators the agent did not see created are matched by sender, receiver
    /// and tag only (reportUnknownCommunicators).
    void markUnknownCommunicators() {
        for (P2pCall& m : messages)
            if (const CommunicatorInfo* info = unknownCommunicator(m_index, m.communicatorId)) {
                ++unknownCommunicators[info->key].messages;
                unknownCommunicators[info->key].size = info->size;
                m.communicatorId = kUnknownCommunicatorId;
            }
    }

    /// Marks the messages and the collective calls that are small calls (or, for a message,
    /// completed in one); the ids are not needed after that.
    void markSmallCalls() {
        sortUnlessSorted(m_smallCallIds);
        const std::vector<int64_t>& ids = m_smallCallIds;
        // One search per sequence of ids, each mostly increasing (scan order).
        ForwardSearch<int64_t> calls(ids), waits(ids), collectiveCalls(ids);
        auto small = [&](ForwardSearch<int64_t>& in, int64_t id) {
            const size_t i = in.lowerBound(id);
            return i < ids.size() && ids[i] == id;
        };
        for (P2pCall& m : messages) {
            m.small = small(calls, m.eventId);
            m.waitSmall = m.waitEventId && small(waits, m.waitEventId);
        }
        smallCollectives.resize(collectives.size());
        for (size_t i = 0; i < collectives.size(); ++i) smallCollectives[i] = small(collectiveCalls, collectives[i].eventId);
        release(m_smallCallIds);
    }

    /// The collectives' part of the rank's facts known without the waits: the first large
    /// collectives as examples (the rest of those facts needs each call's wait: combine()), and
    /// the calls on communicators nobody saw created.
    void markCollectives(RankFacts& f) {
        std::vector<int64_t> examples;
        for (const CollectiveCall& c : collectives) {
            if (c.bytes >= threshold::kLargeCollectiveBytes && examples.size() < 3) examples.push_back(c.eventId);
            if (const CommunicatorInfo* info = unknownCommunicator(m_index, c.communicatorId)) {
                ++unknownCommunicators[info->key].collectives;
                unknownCommunicators[info->key].size = info->size;
            }
        }
        if (!examples.empty()) f.examples["large_collective"] = std::move(examples);
    }

    /// A communication call: counted, and among the small ones when it moves < 64 KiB.
    void countCall(const EventRecord& e) {
        m_commCalls += e.count;
        if (e.bytes < 0 || e.bytes >= threshold::kSmallRequestBytes) return;
        m_smallCalls += e.count;
        m_smallNs += e.dur;
        m_smallFloor.add(e.nameId, e.dur / std::max<int64_t>(1, e.count), e.count);
        m_smallCallIds.push_back(e.id);
        if (m_examples.size() < 3) m_examples.push_back(e.id);
    }

    void addMessage(const EventRecord& e, uint8_t nameFlags) {
        P2pCall m;
        m.peer = e.peer;
        m.ts = e.ts;
        m.end = e.end();
        m.bytes = e.bytes;
        m.eventId = e.id;
        m.send = nameFlags & kSend;
        m.blocking = !(nameFlags & kNonBlocking);
        m.communicatorId = e.communicatorId;
        messages.push_back(m);
    }

    /// A loop of unsuccessful MPI_Iprobe / MPI_Improbe polls (an event with count > 1) waits
    /// for a message nobody has sent yet. Not MPI_Test* or CQ polls: the rank's own request or
    /// work request may be in transfer there, which the wait states measure where they can.
    void countPolling(const EventRecord& e) {
        if (isProbe(e.nameId)) pollingNs += e.dur;
    }

    bool isProbe(int64_t nameId) {
        if (nameId < 0) return false;
        if (size_t(nameId) >= m_probe.size()) m_probe.resize(size_t(nameId) + 1, -1);
        int8_t& known = m_probe[size_t(nameId)];
        if (known < 0) {
            const std::string& n = m_index.string(nameId);
            known = n == "MPI_Iprobe" || n == "MPI_Improbe";
        }
        return known == 1;
    }

    const Trace& m_trace;
    std::unique_ptr<detail::IntegerColumnPages> m_tagPages; ///< null: tags through SQL only
    bool m_tagPagesTried = false;
    schema::Statement m_tagRange;
    schema::Statement m_completionRange;
    std::vector<P2pCompletion> m_completions; ///< of the rank's waits, until finish()
    const TraceIndex& m_index;
    std::vector<int8_t> m_probe; ///< by name id: -1 not yet known
    std::vector<std::pair<int64_t, int64_t>> m_tags; ///< (event id, tag)
    std::vector<CollectiveCall> m_cpuCollectives, m_gpuCollectives;
    int64_t m_commCalls = 0, m_smallCalls = 0, m_smallNs = 0;
    families::SmallCallFloor m_smallFloor;
    int64_t m_outerCallEnd = INT64_MIN; ///< end of the outermost communication call on this track
    std::vector<int64_t> m_examples;
    std::vector<int64_t> m_smallCallIds; ///< the rank's calls counted as small, until finish()
};

/// Time in loops of unsuccessful polls is waiting, not transfer: it joins the ranks' waits.
void addPollingWaits(const std::map<int64_t, int64_t>& polling, WaitStates& waits) {
    for (RankWait& w : waits.perRank) {
        auto it = polling.find(w.rank);
        if (it == polling.end()) continue;
        w.pollingNs += it->second;
        waits.pollingNs += it->second;
    }
}

/// The rank's breakdown (ranks are in rank order).
RankBreakdown* rankOf(std::vector<RankBreakdown>& ranks, int64_t rank) {
    auto rb = std::lower_bound(ranks.begin(), ranks.end(), rank,
                               [](const RankBreakdown& b, int64_t r) { return b.rank < r; });
    return rb != ranks.end() && rb->rank == rank ? &*rb : nullptr;
}

/// A collective call's facts that need its wait: large collectives' achieved bandwidth = bytes /
/// (duration - wait), per rank; a small call that waited for a late partner is not
/// latency-bound: its wait is set apart from its time.
void addCollectiveFacts(const CollectiveCall& c, bool small, int64_t wait, std::vector<RankBreakdown>& ranks) {
    if (c.bytes < threshold::kLargeCollectiveBytes && !small) return;
    RankBreakdown* rb = rankOf(ranks, c.rank);
    if (!rb) return;
    RankFacts& f = rb->facts;
    if (small) f.smallCommWaitNs += wait;
    if (c.bytes < threshold::kLargeCollectiveBytes) return;
    ++f.largeCollectives;
    f.largeCollectiveBytes += c.bytes;
    f.largeCollectiveTransferNs += std::max<int64_t>(0, c.end - c.ts - wait);
}

/// Communicators the agent did not see created have a key of one process only: their
/// collectives cannot be matched across ranks (they stay incomplete) and their messages are
/// matched by sender, receiver and tag only (kUnknownCommunicatorId). Each such communicator is
/// a data-quality entry with its key and the calls made on it, never left out silently.
void reportUnknownCommunicators(const UnknownCommunicators& unknown, std::vector<DataWarning>& warnings) {
    for (const auto& [key, use] : unknown) {
        std::string size = use.size ? fmt::format(", {} members", *use.size) : "";
        warnings.push_back(
            {"unknown_communicator:" + key, use.collectives + use.messages,
             fmt::format("communicator {} was not seen being created{}: {} collective calls on it cannot "
                         "be matched across ranks (not in collective waits), {} point-to-point calls "
                         "matched by ranks and tag only",
                         key, size, use.collectives, use.messages)});
    }
}

/// What the ranks' scans leave across ranks as their passes end: the point-to-point messages,
/// matched as soon as both partners' ranks are done (p2p_matcher.hpp), the collective calls,
/// written out as the rank's run (collective_runs.hpp), and the calls on communicators nobody
/// saw created.
class CommunicationFold final : public RankFold {
public:
    void add(RankScan& s) override {
        auto& scan = static_cast<CommunicationScan&>(s);
        if (!scan.status.ok()) return; // combine() reports it
        matcher.addRank(scan.smallCallRank, std::move(scan.messages));
        release(scan.messages);
        const Status st = runs->addRank(scan.smallCallRank, scan.collectives, scan.smallCollectives);
        if (status.ok() && !st.ok()) status = st;
        release(scan.collectives);
        release(scan.smallCollectives);
        for (auto& [key, use] : scan.unknownCommunicators) {
            unknown[key].messages += use.messages;
            unknown[key].collectives += use.collectives;
            unknown[key].size = use.size;
        }
        release(scan.unknownCommunicators);
    }

    P2pMatcher matcher;
    std::shared_ptr<detail::CollectiveRuns> runs = std::make_shared<detail::CollectiveRuns>();
    UnknownCommunicators unknown;
    Status status; ///< of writing the runs
};

/// The point-to-point waits inside small calls (P2pCall::small, waitSmall).
void addSmallMessageWaits(const std::map<int64_t, int64_t>& waits, std::vector<RankBreakdown>& ranks) {
    for (const auto& [rank, ns] : waits) {
        auto rb = std::lower_bound(ranks.begin(), ranks.end(), rank,
                                   [](const RankBreakdown& b, int64_t r) { return b.rank < r; });
        if (rb != ranks.end() && rb->rank == rank) rb->facts.smallCommWaitNs += ns;
    }
}

class CommunicationAnalysis final : public AnalysisFamily {
public:
    std::string_view name() const override { return "communication"; }
    std::vector<Category> categories() const override { return categoriesOfClass("communication"); }
    std::unique_ptr<RankScan> rankScan(const Trace& trace, const TraceIndex& index) const override {
        return std::make_unique<CommunicationScan>(trace, index);
    }

    std::unique_ptr<RankFold> rankFold() const override { return std::make_unique<CommunicationFold>(); }

    Status combine(AnalysisContext& ctx, std::vector<std::unique_ptr<RankScan>>& scans,
                   Analysis& an) const override {
        auto& fold = static_cast<CommunicationFold&>(*ctx.fold);
        std::map<int64_t, int64_t> polling; // by rank
        std::map<int64_t, std::vector<CommKernel>> commKernels; // by rank
        TopAccumulator top, topCalls;
        for (auto& s : scans) {
            auto& scan = static_cast<CommunicationScan&>(*s);
            if (!scan.status.ok()) return scan.status;
            if (!scan.commKernels.empty()) commKernels[scan.smallCallRank] = std::move(scan.commKernels);
            polling[scan.smallCallRank] += scan.pollingNs;
            top.merge(scan.topCollectives);
            topCalls.merge(scan.topCalls);
            s.reset();
        }
        HPCPROF_RETURN_IF_ERROR(fold.status);
        fold.matcher.finish();
        reportUnknownCommunicators(fold.unknown, an.warnings);
        std::vector<CollectiveCall> matched;
        if (!commKernels.empty()) {
            matched = commKernelInstances(commKernels);
            if (ctx.rangeSteps) annotateStepStragglers(matched, commKernels, *ctx.rangeSteps);
        }
        std::vector<int64_t> rankIds;
        for (const auto& rb : an.ranks) rankIds.push_back(rb.rank);
        // The collective instances settled one at a time, the runs read side by side.
        CollectiveSweep sweep(
            rankIds,
            [&](int64_t id) -> std::optional<int64_t> {
                const CommunicatorInfo* c = ctx.index.communicator(id);
                return c ? c->size : std::nullopt;
            },
            [&](const CollectiveCall& c, bool small, int64_t wait) { addCollectiveFacts(c, small, wait, an.ranks); });
        HPCPROF_RETURN_IF_ERROR(fold.runs->sweep(matched, [&](const CollectiveCall& c, bool small) { sweep.add(c, small); }));
        an.waits = sweep.finish(fold.matcher);
        addPollingWaits(polling, an.waits);
        addSmallMessageWaits(fold.matcher.smallCallWaitNs(), an.ranks);
        fold.matcher = P2pMatcher();
        an.waits.waitByEvent.release();
        const auto name = [&](int64_t id) { return ctx.index.string(id); };
        an.topCollectives = top.top(ctx.options.topItems, name);
        an.topCommunication = topCalls.top(ctx.options.topItems, name);
        ctx.collectiveRuns = std::move(fold.runs); // the steps of the collective pattern read them
        ctx.extraCollectives = std::move(matched);
        return {};
    }

    Status conclude(AnalysisContext&, Analysis& an) const override {
        auto warn = [&](const char* name, int64_t n, const char* what) {
            if (n > 0) an.warnings.push_back({name, n, what});
        };
        warn("incomplete_collectives", an.waits.incompleteInstances,
             "analysis: collective instances missing members (not used for wait states)");
        warn("unmatched_messages", an.waits.unmatchedMessages,
             "analysis: point-to-point calls without a matching partner call");
        return {};
    }

    std::vector<advice::RuleSpec> rules() const override { return advice::communicationRules(); }

};

} // namespace

std::unique_ptr<AnalysisFamily> makeCommunicationAnalysis() {
    return std::make_unique<CommunicationAnalysis>();
}

} // namespace hpcprof::analyzer

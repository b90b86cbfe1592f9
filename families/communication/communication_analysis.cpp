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
#include "hpcprof/schema/raw/common.hpp"
#include "name_flags.hpp"
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
        // CPU track instead of a lookup per message.
        : m_tagRange(detail::db(trace), "SELECT event_id, tag FROM event_detail WHERE event_id BETWEEN ? AND ?"
                                        " AND tag IS NOT NULL"),
          m_completionRange(trackCompletionsQuery(trace)),
          m_index(index) {}

    void beginTrack(const TrackInfo& t, bool gpuTrack) override {
        m_outerCallEnd = INT64_MIN;
        if (gpuTrack) return;
        readCompletions(t);
        if (!t.firstEventId || !t.lastEventId) return;
        m_tagRange.reset();
        m_tagRange.bind(1, *t.firstEventId);
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
        RankFacts& f = end.breakdown.facts;
        f.commCalls += m_commCalls;
        f.smallCommCalls += m_smallCalls;
        f.smallCommNs += m_smallNs;
        f.smallCommFloorNs += m_smallFloor.floorNs();
        m_smallFloor = {};
        if (!m_examples.empty()) f.examples["small_comm"] = std::move(m_examples);
        const int64_t rank = end.breakdown.rank;
        smallCallRank = rank;
        std::sort(m_tags.begin(), m_tags.end());
        for (P2pCall& m : messages) {
            m.rank = rank;
            auto it = std::lower_bound(m_tags.begin(), m_tags.end(), std::make_pair(m.eventId, INT64_MIN));
            m.tag = it != m_tags.end() && it->first == m.eventId ? it->second : -2;
        }
        addCompletions(end.window);
        markUnknownCommunicators();
        // A rank's collective instance is its GPU kernel when the GPU side carries the instance
        // (NCCL), else its host call.
        collectives = std::move(m_gpuCollectives.empty() ? m_cpuCollectives : m_gpuCollectives);
        for (CollectiveCall& c : collectives) c.rank = rank;
        markSmallCalls();
        std::sort(commKernels.begin(), commKernels.end(),
                  [](const CommKernel& a, const CommKernel& b) { return a.ts < b.ts; });
        // Kept until the ranks are combined: only what combine() needs. The statement goes now:
        // it belongs to the worker's connection, which closes when the pass ends.
        m_tagRange = schema::Statement();
        m_completionRange = schema::Statement();
        // Kept at their size: they live until combine(), one set per rank, and growth leaves
        // up to half of a vector's storage unused.
        messages.shrink_to_fit();
        collectives.shrink_to_fit();
        smallCallIds.shrink_to_fit();
        release(m_tags);
        release(m_cpuCollectives);
        release(m_gpuCollectives);
    }

    std::vector<CollectiveCall> collectives; ///< after finish()
    std::vector<CommKernel> commKernels;     ///< GPU communication kernels without an instance
    std::vector<P2pCall> messages;           ///< in scan order
    /// The collective calls counted as small, for their waits (the messages carry their own
    /// mark: P2pCall::small, waitSmall).
    std::vector<int64_t> smallCallIds;
    UnknownCommunicators unknownCommunicators; ///< the messages' (the collectives' are counted later)
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

    /// Marks the messages that are small calls, or completed in one; of the small calls' ids,
    /// only the collectives' stay (their waits are known once the ranks are combined).
    void markSmallCalls() {
        std::sort(smallCallIds.begin(), smallCallIds.end());
        auto small = [&](int64_t id) { return std::binary_search(smallCallIds.begin(), smallCallIds.end(), id); };
        for (P2pCall& m : messages) {
            m.small = small(m.eventId);
            m.waitSmall = m.waitEventId && small(m.waitEventId);
        }
        std::vector<int64_t> collectiveIds;
        collectiveIds.reserve(collectives.size());
        for (const CollectiveCall& c : collectives) collectiveIds.push_back(c.eventId);
        std::sort(collectiveIds.begin(), collectiveIds.end());
        std::erase_if(smallCallIds, [&](int64_t id) {
            return !std::binary_search(collectiveIds.begin(), collectiveIds.end(), id);
        });
    }

    /// A communication call: counted, and among the small ones when it moves < 64 KiB.
    void countCall(const EventRecord& e) {
        m_commCalls += e.count;
        if (e.bytes < 0 || e.bytes >= threshold::kSmallRequestBytes) return;
        m_smallCalls += e.count;
        m_smallNs += e.dur;
        m_smallFloor.add(e.nameId, e.dur / std::max<int64_t>(1, e.count), e.count);
        smallCallIds.push_back(e.id);
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

/// The calls of one rank counted as small messages.
struct SmallCalls {
    int64_t rank = 0;
    std::vector<int64_t> ids;
};

/// A small call that waited for a late partner is not latency-bound: its wait (collective wait,
/// late sender or receiver, from the wait states) is set apart from its time.
void addSmallCallWaits(const std::vector<SmallCalls>& small, const WaitStates& waits,
                       std::vector<RankBreakdown>& ranks) {
    for (const SmallCalls& s : small) {
        auto rb = std::lower_bound(ranks.begin(), ranks.end(), s.rank,
                                   [](const RankBreakdown& b, int64_t rank) { return b.rank < rank; });
        if (rb == ranks.end() || rb->rank != s.rank) continue;
        for (int64_t id : s.ids) rb->facts.smallCommWaitNs += waits.waitByEvent.of(id);
    }
}

/// Large collectives: achieved bandwidth = bytes / (duration - wait), per rank.
void addLargeCollectiveFacts(const CollectiveCalls& collectives, const WaitStates& waits,
                             std::vector<RankBreakdown>& ranks) {
    for (const auto& c : collectives) {
        if (c.bytes < threshold::kLargeCollectiveBytes) continue;
        const int64_t wait = waits.waitByEvent.of(c.eventId);
        // ranks are in rank order and hold every rank with calls.
        auto rb = std::lower_bound(ranks.begin(), ranks.end(), c.rank,
                                   [](const RankBreakdown& b, int64_t rank) { return b.rank < rank; });
        RankFacts& f = rb->facts;
        ++f.largeCollectives;
        f.largeCollectiveBytes += c.bytes;
        f.largeCollectiveTransferNs += std::max<int64_t>(0, c.end - c.ts - wait);
        auto& examples = f.examples["large_collective"];
        if (examples.size() < 3) examples.push_back(c.eventId);
    }
}

/// Communicators the agent did not see created have a key of one process only: their
/// collectives cannot be matched across ranks (they stay incomplete) and their messages are
/// matched by sender, receiver and tag only (kUnknownCommunicatorId). Each such communicator is
/// a data-quality entry with its key and the calls made on it, never left out silently.
void reportUnknownCommunicators(const TraceIndex& index, const CollectiveCalls& collectives,
                                UnknownCommunicators unknown, std::vector<DataWarning>& warnings) {
    for (const auto& c : collectives)
        if (const CommunicatorInfo* info = unknownCommunicator(index, c.communicatorId)) {
            ++unknown[info->key].collectives;
            unknown[info->key].size = info->size;
        }
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
/// matched as soon as both partners' ranks are done (p2p_matcher.hpp), and the messages on
/// communicators nobody saw created.
class CommunicationFold final : public RankFold {
public:
    void add(RankScan& s) override {
        auto& scan = static_cast<CommunicationScan&>(s);
        if (!scan.status.ok()) return; // combine() reports it
        matcher.addRank(scan.smallCallRank, std::move(scan.messages));
        release(scan.messages);
        for (auto& [key, use] : scan.unknownCommunicators) {
            unknown[key].messages += use.messages;
            unknown[key].size = use.size;
        }
        release(scan.unknownCommunicators);
    }

    P2pMatcher matcher;
    UnknownCommunicators unknown;
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
        CollectiveCalls collectives; // grows as the ranks' lists go: one copy of each call at a time
        std::vector<SmallCalls> small;
        std::map<int64_t, int64_t> polling; // by rank
        std::map<int64_t, std::vector<CommKernel>> commKernels; // by rank
        TopAccumulator top, topCalls;
        for (auto& s : scans) {
            auto& scan = static_cast<CommunicationScan&>(*s);
            if (!scan.status.ok()) return scan.status;
            if (!scan.commKernels.empty()) commKernels[scan.smallCallRank] = std::move(scan.commKernels);
            small.push_back({scan.smallCallRank, std::move(scan.smallCallIds)});
            polling[scan.smallCallRank] += scan.pollingNs;
            collectives.insert(collectives.end(), scan.collectives.begin(), scan.collectives.end());
            top.merge(scan.topCollectives);
            topCalls.merge(scan.topCalls);
            s.reset(); // the collectives now live in the merged deque
        }
        fold.matcher.finish();
        reportUnknownCommunicators(ctx.index, collectives, std::move(fold.unknown), an.warnings);
        if (!commKernels.empty()) {
            const std::vector<CollectiveCall> matched = commKernelInstances(commKernels);
            if (ctx.rangeSteps) annotateStepStragglers(matched, commKernels, *ctx.rangeSteps);
            collectives.insert(collectives.end(), matched.begin(), matched.end());
        }
        std::vector<int64_t> rankIds;
        for (const auto& rb : an.ranks) rankIds.push_back(rb.rank);
        an.waits = computeWaitStates(collectives, fold.matcher, rankIds, [&](int64_t id) -> std::optional<int64_t> {
            const CommunicatorInfo* c = ctx.index.communicator(id);
            return c ? c->size : std::nullopt;
        });
        addPollingWaits(polling, an.waits);
        addLargeCollectiveFacts(collectives, an.waits, an.ranks);
        addSmallCallWaits(small, an.waits, an.ranks);
        addSmallMessageWaits(fold.matcher.smallCallWaitNs(), an.ranks);
        fold.matcher = P2pMatcher();
        an.waits.waitByEvent.release(); // an entry per waiting call: its users are done
        const auto name = [&](int64_t id) { return ctx.index.string(id); };
        an.topCollectives = top.top(ctx.options.topItems, name);
        an.topCommunication = topCalls.top(ctx.options.topItems, name);
        ctx.collectives = std::move(collectives);
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

// SPDX-License-Identifier: MIT
// The openmp family's part of the analysis: per rank, its parallel regions (OMPT events of every
// thread), each thread's busy time in each region (its implicit task minus the waits inside it)
// and the imbalance that costs: a region lasts until its slowest thread is done, so it could
// have been (max - mean) busy time shorter with the same work spread evenly. Waits (barriers,
// taskwait, ...) are class sync in the breakdown. Rule: openmp-imbalance.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "family_analysis.hpp"
#include "openmp_section.hpp"

namespace hpcprof::analyzer {

namespace advice {
std::vector<RuleSpec> openMpRules(); // openmp_rules.cpp
}

namespace {

using schema::Category;

enum class OmpKind : uint8_t { Other, Parallel, ImplicitTask, Loop, Wait };

class OpenMpScan final : public RankScan {
public:
    explicit OpenMpScan(const TraceIndex& index) : m_index(index) {}

    void onEvent(const EventRecord& e, const EventContext& ctx) override {
        const int64_t tid = ctx.track.tid.value_or(-1);
        switch (kindOf(e)) {
        case OmpKind::Parallel:
            ++m_out.regions;
            m_out.regionNs += e.dur;
            m_regions[e.seq] = {e.id, e.dur};
            break;
        case OmpKind::ImplicitTask: {
            Share& s = m_shares[{e.seq, tid}];
            s.taskNs += e.dur;
            if (!m_threadNumber.count(tid)) m_threadNumber[tid] = e.peer;
            break;
        }
        case OmpKind::Loop:
            if (ctx.reference) ++m_out.loops;
            break;
        case OmpKind::Wait:
            m_shares[{e.seq, tid}].waitNs += e.dur;
            m_waitByTid[tid] += e.dur;
            break;
        case OmpKind::Other: break;
        }
    }

    void finish(const RankEnd& end) override {
        m_out.rank = end.breakdown.rank;
        std::map<int64_t, OpenMpThread> threads;
        std::map<int64_t, std::vector<int64_t>> busyByRegion;
        for (const auto& [key, share] : m_shares) {
            const int64_t busy = std::max<int64_t>(0, share.taskNs - share.waitNs);
            OpenMpThread& t = threads[key.second];
            t.tid = key.second;
            t.busyNs += busy;
            if (share.taskNs > 0) busyByRegion[key.first].push_back(busy);
        }
        for (auto& [tid, t] : threads) {
            t.waitNs = m_waitByTid[tid];
            t.thread = m_threadNumber.count(tid) ? m_threadNumber[tid] : -1;
            m_out.waitNs += t.waitNs;
            m_out.perThread.push_back(t);
        }
        m_out.threads = int64_t(m_threadNumber.size());
        for (const auto& [seq, busy] : busyByRegion) addRegion(seq, busy);
        m_shares.clear();
    }

    OpenMpRank result() const { return m_out; }

private:
    struct Share {
        int64_t taskNs = 0, waitNs = 0;
    };
    struct Region {
        int64_t eventId = 0, dur = 0;
    };

    OmpKind kindOf(const EventRecord& e) {
        auto it = m_kinds.find(e.nameId);
        if (it != m_kinds.end()) return it->second;
        const std::string& name = m_index.string(e.nameId);
        OmpKind k = name == "omp_parallel"                   ? OmpKind::Parallel
                    : name == "omp_implicit_task"            ? OmpKind::ImplicitTask
                    : name == "omp_loop"                     ? OmpKind::Loop
                    : e.categoryId == int32_t(Category::OmpSync) ? OmpKind::Wait
                                                             : OmpKind::Other;
        m_kinds.emplace(e.nameId, k);
        return k;
    }

    /// A region's imbalance from its threads' busy times.
    void addRegion(int64_t seq, const std::vector<int64_t>& busy) {
        if (busy.size() < 2) return;
        int64_t sum = 0, most = 0;
        for (int64_t b : busy) {
            sum += b;
            most = std::max(most, b);
        }
        const int64_t imbalance = most - sum / int64_t(busy.size());
        m_out.imbalanceNs += imbalance;
        if (imbalance <= m_out.worstImbalanceNs) return;
        m_out.worstImbalanceNs = imbalance;
        if (auto r = m_regions.find(seq); r != m_regions.end()) {
            m_out.worstEventId = r->second.eventId;
            m_out.worstRegionNs = r->second.dur;
        }
    }

    const TraceIndex& m_index;
    std::unordered_map<int64_t, OmpKind> m_kinds;          ///< by name id
    std::map<std::pair<int64_t, int64_t>, Share> m_shares; ///< (region, tid)
    std::map<int64_t, Region> m_regions;                   ///< by region instance
    std::map<int64_t, int64_t> m_threadNumber;             ///< tid -> thread number
    std::map<int64_t, int64_t> m_waitByTid;
    OpenMpRank m_out;
};

class OpenMpAnalysis final : public AnalysisFamily {
public:
    std::string_view name() const override { return OpenMpSection::kName; }
    std::vector<Category> categories() const override {
        return {Category::OmpRegion, Category::OmpWork, Category::OmpSync};
    }
    bool needsDetails() const override { return true; } // seq: the region, peer: the thread
    std::unique_ptr<RankScan> rankScan(const Trace&, const TraceIndex& index) const override {
        return std::make_unique<OpenMpScan>(index);
    }
    Status combine(AnalysisContext&, std::vector<std::unique_ptr<RankScan>>& scans,
                   Analysis& an) const override {
        auto section = std::make_shared<OpenMpSection>();
        for (auto& s : scans) {
            OpenMpRank r = static_cast<OpenMpScan&>(*s).result();
            if (r.regions > 0) section->ranks.push_back(std::move(r));
        }
        if (!section->ranks.empty()) an.sections[OpenMpSection::kName] = std::move(section);
        return {};
    }
    std::vector<advice::RuleSpec> rules() const override { return advice::openMpRules(); }
};

} // namespace

std::unique_ptr<AnalysisFamily> makeOpenMpAnalysis() { return std::make_unique<OpenMpAnalysis>(); }

} // namespace hpcprof::analyzer

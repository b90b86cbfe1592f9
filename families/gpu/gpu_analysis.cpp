// SPDX-License-Identifier: MIT
// The gpu family's part of the analysis: kernels (short ones, FP32 GEMMs), host-device copies
// (pageable memory, blocking copy calls), device synchronizations and the gaps in a GPU rank's
// activity, per rank; the top kernels across ranks. Rules: frequent synchronization, idle GPUs,
// launch-bound phases, host-device copies, FP32 GEMMs. Kernel statistics (kernel_stats.hpp)
// go to its own section, Analysis::sections["gpu"].
#include <algorithm>

#include "family_analysis.hpp"
#include "gpu_idle_causes.hpp"
#include "gpu_section.hpp"
#include "kernel_stats.hpp"
#include "name_flags.hpp"
#include "thresholds.hpp"
#include "top_list.hpp"
#include "trace_access.hpp"

namespace hpcprof::analyzer {

namespace advice {
std::vector<RuleSpec> gpuRules(); // gpu_rules.cpp
}

namespace {

using schema::Category;
constexpr int32_t cat(Category c) { return int32_t(c); }

/// Example event ids per fact, at most three each.
struct Examples {
    std::vector<int64_t> syncCopy, fp32Gemm, pageableCopy, sync;
    static void add(std::vector<int64_t>& v, int64_t id) {
        if (v.size() < 3) v.push_back(id);
    }
};

class GpuScan final : public RankScan {
public:
    GpuScan(const Trace& trace, const TraceIndex& index)
        : kernelStats(trace), idle(index),
          // Copies' memory kinds live in event_arg (its primary key starts with event_id): one
          // range read per GPU track instead of a lookup per copy.
          m_pageableRange(detail::db(trace), "SELECT event_id FROM event_arg WHERE event_id BETWEEN ? AND ?"
                                             " AND key IN ('src_kind', 'dst_kind') AND value = 'pageable'") {}

    void beginTrack(const TrackInfo& t, bool gpuTrack) override {
        kernelStats.beginTrack(t, gpuTrack);
        idle.beginTrack(t);
        m_pageable.clear();
        if (!gpuTrack || !t.firstEventId || !t.lastEventId) return;
        m_pageableRange.reset();
        m_pageableRange.bind(1, *t.firstEventId);
        m_pageableRange.bind(2, *t.lastEventId);
        while (m_pageableRange.step()) m_pageable.push_back(m_pageableRange.int64(0));
        std::sort(m_pageable.begin(), m_pageable.end());
    }

    void onEvent(const EventRecord& e, const EventContext& ctx) override {
        idle.onEvent(e, ctx.gpuTrack);
        switch (Category(e.categoryId)) {
        case Category::CudaApi:
            kernelStats.onApi(e);
            if (ctx.nameFlags & kSyncCopyApi) {
                ++m_facts.syncCopies;
                m_facts.syncCopyNs += e.dur;
                Examples::add(m_examples.syncCopy, e.id);
            }
            break;
        case Category::GpuKernel:
        case Category::ComputeRange:
            if (ctx.gpuTrack) kernel(e, ctx);
            break;
        case Category::GpuCommKernel:
            if (ctx.gpuTrack) kernelStats.onKernel(e, KernelClass::Communication);
            topKernels.add(e.nameId, e.dur, -1);
            break;
        case Category::GpuMemset:
            if (ctx.gpuTrack) kernelStats.onCopy(e, true);
            break;
        case Category::GpuMemcpy:
            if (ctx.gpuTrack) kernelStats.onCopy(e, false);
            if (std::binary_search(m_pageable.begin(), m_pageable.end(), e.id)) {
                ++m_facts.pageableCopies;
                m_facts.pageableCopyNs += e.dur;
                Examples::add(m_examples.pageableCopy, e.id);
            }
            break;
        case Category::GpuSync:
            m_facts.syncCalls += e.count;
            m_facts.syncNs += e.dur;
            Examples::add(m_examples.sync, e.id);
            break;
        default: break;
        }
    }

    void finish(const RankEnd& end) override {
        RankFacts& f = end.breakdown.facts;
        f.kernels += m_facts.kernels;
        f.kernelNs += m_facts.kernelNs;
        f.shortKernels += m_facts.shortKernels;
        f.fp32GemmKernels += m_facts.fp32GemmKernels;
        f.fp32GemmNs += m_facts.fp32GemmNs;
        f.syncCopies += m_facts.syncCopies;
        f.syncCopyNs += m_facts.syncCopyNs;
        f.pageableCopies += m_facts.pageableCopies;
        f.pageableCopyNs += m_facts.pageableCopyNs;
        f.syncCalls += m_facts.syncCalls;
        f.syncNs += m_facts.syncNs;
        auto put = [&](const char* key, std::vector<int64_t>& v) {
            if (!v.empty()) f.examples[key] = std::move(v);
        };
        put("sync_copy", m_examples.syncCopy);
        put("fp32_gemm", m_examples.fp32Gemm);
        put("pageable_copy", m_examples.pageableCopy);
        put("sync", m_examples.sync);
        if (end.breakdown.gpu) gaps(end, f);
        kernelStats.finish(end);
        idle.finish(end);
        // Kept until the ranks are combined: the statement belongs to the worker's connection,
        // which closes when the pass ends.
        m_pageableRange = schema::Statement();
        release(m_pageable);
    }

    TopAccumulator topKernels;
    KernelStats kernelStats;
    GpuIdleCauses idle;

private:
    void kernel(const EventRecord& e, const EventContext& ctx) {
        ++m_facts.kernels;
        m_facts.kernelNs += e.dur;
        if (e.dur < threshold::kShortKernelNs) ++m_facts.shortKernels;
        if (ctx.nameFlags & kFp32Gemm) {
            ++m_facts.fp32GemmKernels;
            m_facts.fp32GemmNs += e.dur;
            Examples::add(m_examples.fp32Gemm, e.id);
        }
        topKernels.add(e.nameId, e.dur, -1);
        kernelStats.onKernel(e, KernelClass::Compute);
    }

    /// The gaps in the GPU's activity (its reference timeline) inside the window.
    static void gaps(const RankEnd& end, RankFacts& f) {
        IntervalSet busy;
        for (int c = 0; c < kEventClassCount; ++c)
            if (c != int(EventClass::Annotation)) busy = busy.unite(end.sets.reference[c]);
        busy = busy.intersect(end.window);
        if (busy.empty()) return;
        f.gpuActiveBegin = busy.items().front().begin;
        f.gpuActiveEnd = busy.items().back().end;
        IntervalSet gaps = busy.complementIn(f.gpuActiveBegin, f.gpuActiveEnd).intersect(end.window);
        for (const auto& g : gaps.items()) {
            ++f.gpuGaps;
            f.gpuGapNs += g.length();
            if (g.length() < threshold::kShortGpuGapNs) {
                ++f.shortGpuGaps;
                f.shortGpuGapNs += g.length();
            }
        }
    }

    schema::Statement m_pageableRange;
    std::vector<int64_t> m_pageable; ///< the current track's pageable copies, sorted
    RankFacts m_facts;
    Examples m_examples;
};

/// The ranks' idle causes, in a section of their own (gpu_idle_section.hpp).
void combineIdle(std::vector<std::unique_ptr<RankScan>>& scans, Analysis& an) {
    auto section = std::make_shared<GpuIdleSection>();
    for (auto& s : scans) {
        GpuIdleRank& r = static_cast<GpuScan&>(*s).idle.result;
        if (r.idleNs > 0 || !r.pieces.empty()) section->ranks.push_back(std::move(r));
    }
    std::sort(section->ranks.begin(), section->ranks.end(),
              [](const GpuIdleRank& a, const GpuIdleRank& b) { return a.rank < b.rank; });
    if (!section->ranks.empty()) an.sections[GpuIdleSection::kName] = std::move(section);
}

class GpuAnalysis final : public AnalysisFamily {
public:
    std::string_view name() const override { return "gpu"; }
    std::vector<Category> categories() const override {
        return {Category::CudaApi, Category::GpuKernel, Category::ComputeRange, Category::GpuCommKernel,
                Category::GpuMemcpy, Category::GpuMemset, Category::GpuSync,
                // The host's side of GPU idle time (gpu_idle_causes.hpp): what it waited in.
                Category::FdWait, Category::ProcessWait, Category::PosixIo, Category::Stdio, Category::MpiIo,
                Category::MpiP2p, Category::MpiCollective, Category::MpiWait, Category::MpiOneSided,
                Category::MpiSetup, Category::Socket, Category::NcclCollective, Category::NcclP2p,
                Category::NcclSetup, Category::UserRange, Category::CpuOp, Category::Nvtx};
    }
    /// The correlation ids of API calls and kernels (launch latency, launched work not started).
    bool needsDetails() const override { return true; }
    std::unique_ptr<RankScan> rankScan(const Trace& trace, const TraceIndex& index) const override {
        return std::make_unique<GpuScan>(trace, index);
    }
    Status combine(AnalysisContext& ctx, std::vector<std::unique_ptr<RankScan>>& scans,
                   Analysis& an) const override {
        TopAccumulator top;
        for (auto& s : scans) top.merge(static_cast<GpuScan&>(*s).topKernels);
        const auto nameOf = [&](int64_t id) { return ctx.index.string(id); };
        an.topKernels = top.top(ctx.options.topItems, nameOf);
        an.kernels = top.top(SIZE_MAX, nameOf);
        auto section = std::make_shared<GpuSection>();
        std::vector<int64_t> latencies;
        for (auto& s : scans) addKernelRank(ctx.index, static_cast<GpuScan&>(*s).kernelStats, *section, latencies);
        finishKernelSection(*section, latencies);
        if (!section->ranks.empty()) an.sections[GpuSection::kName] = std::move(section);
        combineIdle(scans, an);
        return {};
    }
    /// Per-step idle causes, once the steps are known.
    Status conclude(AnalysisContext&, Analysis& an) const override {
        auto it = an.sections.find(GpuIdleSection::kName);
        if (it == an.sections.end() || an.steps.steps.empty()) return {};
        // The section is this family's own, made in combine(); only its steps are added here.
        auto& section = const_cast<GpuIdleSection&>(static_cast<const GpuIdleSection&>(*it->second));
        section.steps = idleBySteps(section.ranks, an.steps);
        return {};
    }
    std::vector<advice::RuleSpec> rules() const override { return advice::gpuRules(); }
};

} // namespace

std::unique_ptr<AnalysisFamily> makeGpuAnalysis() { return std::make_unique<GpuAnalysis>(); }

} // namespace hpcprof::analyzer

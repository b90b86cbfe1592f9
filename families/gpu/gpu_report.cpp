// SPDX-License-Identifier: MIT
// The gpu family's report section: kernel statistics, launch latency and queue depth, copies by
// direction and the kernel classes' overlaps (gpu_section.hpp). JSON here, the tables of the
// text, markdown and HTML reports in gpu_report_tables.cpp; nothing when the trace has no GPU
// kernels or copies.
#include "gpu_report.hpp"
#include "gpu_section.hpp"

#include "report_section.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;
using nlohmann::json;

std::unique_ptr<ReportSection> makeGpuIdleReport(); // gpu_idle_report.cpp

namespace {

json latencyJson(const LatencyStats& s) {
    return {{"count", s.count},       {"mean_ns", s.meanNs}, {"median_ns", s.medianNs},
            {"p95_ns", s.p95Ns},      {"max_ns", s.maxNs},   {"negative", s.negative}};
}

json copiesJson(const std::vector<CopyDirectionStats>& copies) {
    json out = json::array();
    for (const auto& c : copies)
        out.push_back({{"direction", c.direction}, {"count", c.count}, {"bytes", c.bytes},
                       {"dur_ns", c.durNs}, {"gb_per_s", c.gbPerS()}});
    return out;
}

json kernelJson(const KernelNameStats& k) {
    return {{"name", k.name},          {"class", kernelClassName(k.cls)}, {"count", k.count},
            {"total_ns", k.totalNs},   {"mean_ns", k.meanNs},             {"min_ns", k.minNs},
            {"max_ns", k.maxNs},       {"std_ns", k.stdNs},               {"launch", latencyJson(k.launch)}};
}

json queueJson(const QueueDepthStats& q) {
    return {{"max", q.max},           {"mean", q.mean},           {"begin_ns", q.beginNs},
            {"bucket_ns", q.bucketNs}, {"mean_series", q.meanSeries}, {"max_series", q.maxSeries}};
}

/// Kernel names per rank in the JSON report, by total time: a job has thousands of names, some
/// of them kilobytes long; the rest are summed up in other_kernels.
constexpr size_t kJsonKernelsPerRank = 50;

json rankJson(const GpuKernelRank& r) {
    json kernels = json::array();
    int64_t otherNames = 0, otherCount = 0, otherNs = 0;
    for (size_t i = 0; i < r.kernels.size(); ++i) {
        const KernelNameStats& k = r.kernels[i];
        if (i < kJsonKernelsPerRank) {
            kernels.push_back(kernelJson(k));
            continue;
        }
        ++otherNames;
        otherCount += k.count;
        otherNs += k.totalNs;
    }
    json others = {{"names", otherNames}, {"count", otherCount}, {"total_ns", otherNs}};
    json classes = json::object();
    for (int c = 0; c < kKernelClassCount; ++c)
        classes[kernelClassName(KernelClass(c))] = {{"count", r.classes[c].count},
                                                    {"total_ns", r.classes[c].totalNs},
                                                    {"busy_ns", r.classes[c].busyNs}};
    const int64_t commBusy = r.classes[int(KernelClass::Communication)].busyNs;
    return {{"rank", r.rank},
            {"kernels", std::move(kernels)},
            {"other_kernels", std::move(others)},
            {"launch_latency", latencyJson(r.launch)},
            {"unmatched_kernels", r.unmatchedKernels},
            {"queue", queueJson(r.queue)},
            {"copies", copiesJson(r.copies)},
            {"classes", std::move(classes)},
            {"overlap", {{"comm_compute_ns", r.commComputeOverlapNs},
                         {"comm_compute_pct", commBusy > 0 ? 100.0 * double(r.commComputeOverlapNs) / double(commBusy) : 0.0},
                         {"memory_compute_ns", r.memoryComputeOverlapNs},
                         {"comm_memory_ns", r.commMemoryOverlapNs}}}};
}

/// The family's one section: kernel statistics, then why the GPU idles.
class GpuReport final : public ReportSection {
public:
    std::string_view name() const override { return GpuSection::kName; }

    // Keys are set one by one: other parts of the gpu family's result may share the object.
    void json(const Analysis& a, nlohmann::json& doc) const override {
        m_idle->json(a, doc);
        const GpuSection* g = gpuSection(a);
        if (!g) return;
        nlohmann::json ranks = nlohmann::json::array();
        for (const auto& r : g->ranks) ranks.push_back(rankJson(r));
        nlohmann::json& out = doc[GpuSection::kName];
        out["launch_latency"] = latencyJson(g->launch);
        out["copies"] = copiesJson(g->copies);
        out["ranks"] = std::move(ranks);
    }
    std::string text(const Analysis& a) const override { return gpuText(a) + m_idle->text(a); }
    std::string markdown(const Analysis& a) const override { return gpuMarkdown(a) + m_idle->markdown(a); }
    std::string html(const Analysis& a) const override { return gpuHtml(a) + m_idle->html(a); }

private:
    std::unique_ptr<ReportSection> m_idle = makeGpuIdleReport();
};

} // namespace

} // namespace hpcprof::report::detail

namespace hpcprof::report {
std::unique_ptr<ReportSection> makeGpuReport() { return std::make_unique<detail::GpuReport>(); }
} // namespace hpcprof::report

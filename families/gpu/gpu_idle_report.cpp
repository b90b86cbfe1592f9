// SPDX-License-Identifier: MIT
// The gpu family's idle-cause section: per GPU rank (and per step when there are steps), the GPU's
// idle time split by what it waited for, and the longest idle gaps; nothing without a GPU rank.
#include <fmt/format.h>

#include "gpu_idle_section.hpp"
#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;

namespace {

double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0; }

nlohmann::json causesJson(const std::array<int64_t, kGpuIdleCauseCount>& byCause) {
    nlohmann::json j = nlohmann::json::object();
    for (int c = 0; c < kGpuIdleCauseCount; ++c) j[gpuIdleCauseName(GpuIdleCause(c))] = byCause[size_t(c)];
    return j;
}

/// "input 38.0%, host 30.1%, ..." for the causes with time, largest first.
std::string causesText(const std::array<int64_t, kGpuIdleCauseCount>& byCause, int64_t idle) {
    std::string o;
    for (GpuIdleCause c : causesByTime(byCause))
        o += fmt::format("{}{} {:.1f}%", o.empty() ? "" : ", ", gpuIdleCauseName(c), pct(byCause[size_t(c)], idle));
    return o.empty() ? "-" : o;
}

class GpuIdleReport final : public ReportSection {
public:
    std::string_view name() const override { return GpuIdleSection::kName; }

    void json(const Analysis& a, nlohmann::json& doc) const override {
        const GpuIdleSection* g = gpuIdleSection(a);
        if (!g) return;
        nlohmann::json ranks = nlohmann::json::array();
        for (const auto& r : g->ranks) {
            nlohmann::json gaps = nlohmann::json::array();
            for (const auto& gap : r.longestGaps)
                gaps.push_back({{"begin_ns", gap.begin}, {"end_ns", gap.end}, {"dur_ns", gap.end - gap.begin},
                                {"cause", gpuIdleCauseName(gap.cause)}});
            ranks.push_back({{"rank", r.rank}, {"idle_ns", r.idleNs}, {"by_cause_ns", causesJson(r.byCause)},
                             {"longest_gaps", std::move(gaps)}});
        }
        nlohmann::json steps = nlohmann::json::array();
        for (const auto& s : g->steps)
            steps.push_back({{"step", s.index}, {"span_ns", s.spanNs}, {"idle_ns", s.idleNs},
                             {"by_cause_ns", causesJson(s.byCause)}});
        doc[GpuIdleSection::kName] = {{"ranks", std::move(ranks)}, {"steps", std::move(steps)}};
    }

    std::string text(const Analysis& a) const override {
        const GpuIdleSection* g = gpuIdleSection(a);
        if (!g) return {};
        std::string o = "\nWhy the GPU idles (idle time by what it waited for)\n";
        for (const auto& r : g->ranks) {
            o += fmt::format("  rank {:<5} idle {:>10}: {}\n", r.rank, formatDuration(double(r.idleNs)),
                             causesText(r.byCause, r.idleNs));
            for (const auto& gap : r.longestGaps)
                o += fmt::format("      gap {:>10} at {:>10}: {}\n", formatDuration(double(gap.end - gap.begin)),
                                 formatDuration(double(gap.begin)), gpuIdleCauseName(gap.cause));
        }
        for (const auto& s : g->steps)
            o += fmt::format("  step {:<5} idle {:>10} ({:.1f}% of the step): {}\n", s.index,
                             formatDuration(double(s.idleNs)), pct(s.idleNs, s.spanNs), causesText(s.byCause, s.idleNs));
        return o;
    }

    std::string markdown(const Analysis& a) const override {
        const GpuIdleSection* g = gpuIdleSection(a);
        if (!g) return {};
        std::string o = "### Why the GPU idles\n\n| rank | idle | by cause |\n|---:|---:|---|\n";
        for (const auto& r : g->ranks)
            o += fmt::format("| {} | {} | {} |\n", r.rank, formatDuration(double(r.idleNs)), causesText(r.byCause, r.idleNs));
        if (!g->steps.empty()) {
            o += "\n| step | idle | by cause |\n|---:|---:|---|\n";
            for (const auto& s : g->steps)
                o += fmt::format("| {} | {} | {} |\n", s.index, formatDuration(double(s.idleNs)),
                                 causesText(s.byCause, s.idleNs));
        }
        return o + "\n";
    }

    std::string html(const Analysis& a) const override {
        const GpuIdleSection* g = gpuIdleSection(a);
        if (!g) return {};
        std::string s = "<h2>Why the GPU idles</h2>\n<table><tr><th>rank</th><th>idle</th>";
        for (int c = 0; c < kGpuIdleCauseCount; ++c) s += fmt::format("<th>{}</th>", gpuIdleCauseName(GpuIdleCause(c)));
        s += "</tr>\n";
        for (const auto& r : g->ranks) {
            s += fmt::format("<tr><td class=\"n\">{}</td><td class=\"n\">{}</td>", r.rank, formatDuration(double(r.idleNs)));
            for (int c = 0; c < kGpuIdleCauseCount; ++c)
                s += fmt::format("<td class=\"n\">{:.1f}%</td>", pct(r.byCause[size_t(c)], r.idleNs));
            s += "</tr>\n";
        }
        return s + "</table>\n";
    }
};

} // namespace

/// The idle-cause part of the gpu family's report section (gpu_report.cpp writes it after the
/// kernel statistics).
std::unique_ptr<ReportSection> makeGpuIdleReport() { return std::make_unique<GpuIdleReport>(); }

} // namespace hpcprof::report::detail

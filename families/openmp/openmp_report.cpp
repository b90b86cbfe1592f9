// SPDX-License-Identifier: MIT
// The openmp family's report section: per rank, its parallel regions, their threads' imbalance
// and each thread's busy and waiting time; nothing when the trace has no OpenMP regions.
#include <fmt/format.h>

#include "openmp_section.hpp"
#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;

namespace {

double pct(int64_t part, int64_t whole) { return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0; }

nlohmann::json rankJson(const OpenMpRank& r) {
    nlohmann::json threads = nlohmann::json::array();
    for (const auto& t : r.perThread)
        threads.push_back({{"tid", t.tid}, {"thread", t.thread}, {"busy_ns", t.busyNs}, {"wait_ns", t.waitNs}});
    return {{"rank", r.rank},
            {"regions", r.regions},
            {"region_ns", r.regionNs},
            {"threads", r.threads},
            {"loops", r.loops},
            {"wait_ns", r.waitNs},
            {"thread_imbalance_ns", r.imbalanceNs},
            {"thread_imbalance_pct", pct(r.imbalanceNs, r.regionNs)},
            {"worst_region", {{"dur_ns", r.worstRegionNs}, {"imbalance_ns", r.worstImbalanceNs},
                              {"event_id", r.worstEventId}}},
            {"per_thread", std::move(threads)}};
}

class OpenMpReport final : public ReportSection {
public:
    std::string_view name() const override { return OpenMpSection::kName; }

    void json(const Analysis& a, nlohmann::json& doc) const override {
        const OpenMpSection* omp = openMpSection(a);
        if (!omp) return;
        nlohmann::json ranks = nlohmann::json::array();
        for (const auto& r : omp->ranks) ranks.push_back(rankJson(r));
        doc[OpenMpSection::kName] = {{"ranks", std::move(ranks)}};
    }

    std::string text(const Analysis& a) const override {
        const OpenMpSection* omp = openMpSection(a);
        if (!omp) return {};
        std::string o = "\nOpenMP parallel regions (imbalance: the slowest thread's extra busy time)\n";
        o += fmt::format("  {:>6} {:>8} {:>10} {:>8} {:>12} {:>12} {:>9}\n", "rank", "regions", "time",
                         "threads", "thread wait", "imbalance", "of time");
        for (const auto& r : omp->ranks)
            o += fmt::format("  {:>6} {:>8} {:>10} {:>8} {:>12} {:>12} {:>8.1f}%\n", r.rank, r.regions,
                             formatDuration(double(r.regionNs)), r.threads, formatDuration(double(r.waitNs)),
                             formatDuration(double(r.imbalanceNs)), pct(r.imbalanceNs, r.regionNs));
        return o;
    }

    std::string markdown(const Analysis& a) const override {
        const OpenMpSection* omp = openMpSection(a);
        if (!omp) return {};
        std::string o = "### OpenMP parallel regions\n\n| rank | regions | time | threads | thread wait |"
                        " imbalance | of time |\n|---:|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& r : omp->ranks)
            o += fmt::format("| {} | {} | {} | {} | {} | {} | {:.1f}% |\n", r.rank, r.regions,
                             formatDuration(double(r.regionNs)), r.threads, formatDuration(double(r.waitNs)),
                             formatDuration(double(r.imbalanceNs)), pct(r.imbalanceNs, r.regionNs));
        return o + "\n";
    }

    std::string html(const Analysis& a) const override {
        const OpenMpSection* omp = openMpSection(a);
        if (!omp) return {};
        std::string s = "<h2>OpenMP</h2>\n<p>Imbalance: per region, the slowest thread's busy time minus "
                        "the threads' mean, summed over regions.</p>\n<table><tr><th>rank</th>"
                        "<th>regions</th><th>time</th><th>threads</th><th>thread wait</th>"
                        "<th>imbalance</th><th>of time</th><th>busy per thread</th></tr>\n";
        for (const auto& r : omp->ranks) {
            std::string busy;
            for (const auto& t : r.perThread)
                busy += fmt::format("{}{}", busy.empty() ? "" : ", ", formatDuration(double(t.busyNs)));
            s += fmt::format("<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                             "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                             "<td class=\"n\">{:.1f}%</td><td>{}</td></tr>\n",
                             r.rank, r.regions, formatDuration(double(r.regionNs)), r.threads,
                             formatDuration(double(r.waitNs)), formatDuration(double(r.imbalanceNs)),
                             pct(r.imbalanceNs, r.regionNs), htmlEscape(busy));
        }
        return s + "</table>\n";
    }
};

} // namespace

} // namespace hpcprof::report::detail

namespace hpcprof::report {
std::unique_ptr<ReportSection> makeOpenMpReport() { return std::make_unique<detail::OpenMpReport>(); }
} // namespace hpcprof::report

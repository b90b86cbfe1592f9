// SPDX-License-Identifier: MIT
// The counters family's report section: the `counters` object of the JSON report and the HTML
// section that draws each rank's CPU utilisation and run-queue wait under its timeline strip.
#include <fmt/format.h>

#include <algorithm>

#include "hpcprof/report/report_json.hpp"
#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;
using nlohmann::json;

namespace {

/// -1 ("not counted") becomes null in JSON.
json orNull(double v) { return v < 0 ? json(nullptr) : json(v); }

json countersJson(const Analysis& a) {
    const CounterAnalysis& c = a.counters;
    json counted = json::array(), missing = json::array();
    for (const auto& x : c.counters) {
        if (x.available)
            counted.push_back({{"counter", x.counter}, {"source", x.source}});
        else
            missing.push_back({{"counter", x.counter}, {"reason", x.reason}});
    }
    json ranks = json::array();
    for (const auto& r : c.ranks)
        ranks.push_back({{"rank", r.rank}, {"host", r.host}, {"threads", r.threads},
                         {"busy_threads", r.busyThreads}, {"span_ns", r.spanNs},
                         {"utilization", orNull(r.utilization)}, {"cpu_wait_fraction", orNull(r.cpuWaitFraction)},
                         {"voluntary_switches_per_s", orNull(r.voluntaryPerS)},
                         {"involuntary_switches_per_s", orNull(r.involuntaryPerS)},
                         {"context_switches_per_s", orNull(r.contextSwitchesPerS)},
                         {"migrations_per_s", orNull(r.migrationsPerS)}, {"page_faults_per_s", orNull(r.pageFaultsPerS)},
                         {"ipc", orNull(r.ipc)}, {"cache_misses_per_kinstr", orNull(r.cacheMissesPerKInstr)},
                         {"branch_misses_per_kinstr", orNull(r.branchMissesPerKInstr)},
                         {"compute", {{"ns", r.computeNs}, {"utilization", orNull(r.computeUtilization)},
                                      {"cpu_wait_fraction", orNull(r.computeWaitFraction)},
                                      {"ipc", orNull(r.computeIpc)}}},
                         {"calls", {{"cpu_wait_fraction", orNull(r.callsWaitFraction)}}}});
    json hosts = json::array();
    int64_t busy = 0, cpus = 0;
    double maxRatio = 0;
    for (const auto& h : c.hosts) {
        hosts.push_back({{"host", h.host}, {"cpus", h.cpus}, {"threads", h.threads}, {"busy_threads", h.busyThreads},
                         {"ranks", h.ranks}, {"involuntary_switches_per_s", orNull(h.involuntaryPerS)}});
        busy += h.busyThreads;
        cpus += h.cpus;
        if (h.cpus > 0) maxRatio = std::max(maxRatio, double(h.busyThreads) / double(h.cpus));
    }
    return {{"present", c.present}, {"counted", std::move(counted)}, {"unavailable", std::move(missing)},
            {"busy_threads", busy}, {"cpus", cpus}, {"max_busy_per_cpu", maxRatio},
            {"ranks", std::move(ranks)}, {"hosts", std::move(hosts)}};
}

std::string countersHtml(const Analysis& a) {
    const CounterAnalysis& c = a.counters;
    if (!c.present && c.counters.empty()) return {};
    std::string s = "<h2>CPU counters</h2>\n";
    const size_t n = std::min<size_t>(c.ranks.size(), 512);
    bool chart = n > 0 && !c.ranks[0].utilizationOverview.empty();
    if (chart) {
        // Per rank: its timeline strip's twin, CPU utilisation (blue) and run-queue wait (red).
        const int rowH = 22, labelW = 70, width = 760;
        s += "<p>Per rank, main thread: CPU utilisation (blue area) and time waiting for a CPU (red line), 0-100 %.</p>\n";
        s += fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\""
                         " aria-label=\"counter tracks per rank\">\n", labelW + width + 10, int(n) * rowH + 6);
        for (size_t i = 0; i < n; ++i) {
            const RankCounters& r = c.ranks[i];
            int y = int(i) * rowH;
            s += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"9\">rank {}</text>", y + 12, r.rank);
            s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f4f4\"/>", labelW, y, width, rowH - 3);
            auto line = [&](const std::vector<float>& v, bool area) {
                if (v.empty()) return std::string();
                const double bw = double(width) / double(v.size());
                std::string pts;
                double base = y + rowH - 3, h = rowH - 5;
                if (area) pts += fmt::format("{:.1f},{:.1f} ", double(labelW), base);
                for (size_t b = 0; b < v.size(); ++b) {
                    if (v[b] < 0) continue;
                    pts += fmt::format("{:.1f},{:.1f} ", labelW + (double(b) + 0.5) * bw, base - h * double(v[b]));
                }
                if (area) pts += fmt::format("{:.1f},{:.1f}", double(labelW + width), base);
                return area ? "<polygon points=\"" + pts + "\" fill=\"#4e79a7\" fill-opacity=\"0.6\"/>"
                            : "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"#e15759\" stroke-width=\"1\"/>";
            };
            s += line(r.utilizationOverview, true) + line(r.waitOverview, false) + "\n";
        }
        s += "</svg>\n";
    }
    auto pct = [](double v) { return v < 0 ? std::string("-") : fmt::format("{:.0f} %", 100 * v); };
    auto num = [](double v) { return v < 0 ? std::string("-") : fmt::format("{:.1f}", v); };
    s += "<table><tr><th>rank</th><th>CPU use</th><th>waiting for CPU</th><th>compute: CPU use</th>"
         "<th>IPC</th><th>invol. switches/s</th><th>vol. switches/s</th><th>migrations/s</th><th>busy threads</th></tr>\n";
    for (const auto& r : c.ranks)
        s += fmt::format("<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                         "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                         "<td class=\"n\">{}</td></tr>\n",
                         r.rank, pct(r.utilization), pct(r.cpuWaitFraction), pct(r.computeUtilization),
                         r.computeIpc >= 0 ? num(r.computeIpc) : num(r.ipc), num(r.involuntaryPerS),
                         num(r.voluntaryPerS), num(r.migrationsPerS), r.busyThreads);
    s += "</table>\n";
    for (const auto& h : c.hosts)
        s += fmt::format("<p>Host <code>{}</code>: {} busy threads on {} CPUs.</p>\n", htmlEscape(h.host),
                         h.busyThreads, h.cpus);
    bool anyMissing = false;
    for (const auto& x : c.counters) anyMissing |= !x.available;
    if (anyMissing) {
        s += "<p>Not counted on this machine:</p><ul>\n";
        for (const auto& x : c.counters)
            if (!x.available)
                s += fmt::format("<li><code>{}</code>: {}</li>\n", htmlEscape(x.counter), htmlEscape(x.reason));
        s += "</ul>\n";
    }
    return s;
}

class CountersReport final : public ReportSection {
public:
    std::string_view name() const override { return "counters"; }
    void json(const Analysis& a, nlohmann::json& doc) const override {
        if (a.counters.present || !a.counters.counters.empty()) doc["counters"] = countersJson(a);
    }
    std::string htmlTimeline(const Analysis& a) const override { return countersHtml(a); }
};

} // namespace

} // namespace hpcprof::report::detail

namespace hpcprof::report {
std::unique_ptr<ReportSection> makeCountersReport() { return std::make_unique<detail::CountersReport>(); }
} // namespace hpcprof::report

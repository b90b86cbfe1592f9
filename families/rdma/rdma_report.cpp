// SPDX-License-Identifier: MIT
// The RDMA parts of the reports: per queue pair and per rank traffic and the traffic per MPI/NCCL
// call that posted it, as the JSON report's `rdma` object and a section of the text, markdown and
// HTML reports. Every writer shows it only when the trace has RDMA work requests; queue,
// device, call and communicator names come from the trace and are escaped.
#include <fmt/format.h>

#include <algorithm>

#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;
using nlohmann::json;

namespace {

json optJson(const std::optional<int64_t>& v) { return v ? json(*v) : json(nullptr); }

std::string rankText(const std::optional<int64_t>& r) { return r ? std::to_string(*r) : std::string("-"); }

std::string bytesText(int64_t b) {
    if (b >= int64_t(1) << 30) return fmt::format("{:.2f} GiB", double(b) / double(int64_t(1) << 30));
    if (b >= 1 << 20) return fmt::format("{:.2f} MiB", double(b) / double(1 << 20));
    if (b >= 1 << 10) return fmt::format("{:.1f} KiB", double(b) / 1024.0);
    return fmt::format("{} B", b);
}

/// "12.3 of 100 Gb/s" or "12.3 Gb/s" when the link rate is unknown.
std::string rateText(double gbps, int64_t linkMbps) {
    if (linkMbps > 0) return fmt::format("{:.3g} of {:.4g} Gb/s", gbps, double(linkMbps) / 1000.0);
    return fmt::format("{:.3g} Gb/s", gbps);
}

std::string latencyText(const std::optional<int64_t>& ns) {
    return ns ? formatDuration(double(*ns)) : std::string("-");
}

std::string callText(const RdmaCause& c) { return c.call.empty() ? std::string("(no MPI/NCCL call)") : c.call; }

json rdmaJson(const Analysis& a) {
    const RdmaAnalysis& r = a.rdma;
    json queues = json::array();
    for (const auto& q : r.queues)
        queues.push_back({{"track_id", q.trackId}, {"rank", optJson(q.rank)}, {"process_id", q.processId},
                          {"name", q.name}, {"work_requests", q.workRequests}, {"bytes", q.bytes},
                          {"small_work_requests", q.smallWorkRequests}, {"first_ts_ns", q.firstTs},
                          {"last_end_ns", q.lastEnd}, {"link_rate_mbps", q.linkRateMbps},
                          {"achieved_gbps", q.achievedGbps}, {"peak_bin_gbps", q.peakBinGbps},
                          {"gbps_over_time", q.gbpsOverTime},
                          {"latency_ns", {{"p50", optJson(q.latencyP50Ns)}, {"p90", optJson(q.latencyP90Ns)},
                                          {"p99", optJson(q.latencyP99Ns)}, {"max", optJson(q.latencyMaxNs)}}}});
    json ranks = json::array();
    for (const auto& k : r.ranks)
        ranks.push_back({{"rank", optJson(k.rank)}, {"process_id", k.processId}, {"work_requests", k.workRequests},
                         {"bytes", k.bytes}, {"small_work_requests", k.smallWorkRequests},
                         {"small_message_rate_per_s", k.smallMessageRatePerS}, {"achieved_gbps", k.achievedGbps},
                         {"link_rate_mbps", k.linkRateMbps}});
    json causes = json::array();
    for (const auto& c : r.causes)
        causes.push_back({{"call", c.call.empty() ? json(nullptr) : json(c.call)},
                          {"communicator", c.communicator.empty() ? json(nullptr) : json(c.communicator)},
                          {"instances", c.instances}, {"work_requests", c.workRequests}, {"bytes", c.bytes}});
    return {{"bin_ns", r.binNs}, {"small_bytes", kRdmaSmallBytes}, {"queues", std::move(queues)},
            {"ranks", std::move(ranks)}, {"causes", std::move(causes)}};
}

std::string rdmaText(const Analysis& a) {
    const RdmaAnalysis& r = a.rdma;
    if (!r.any()) return {};
    std::string o = "\nRDMA traffic per queue pair\n";
    o += fmt::format("  {:<24} {:>5} {:>10} {:>12} {:>8} {:>22} {:>10} {:>10}\n", "queue", "rank", "WRs", "bytes",
                     "small", "achieved", "p50 lat", "p99 lat");
    for (const auto& q : r.queues)
        o += fmt::format("  {:<24} {:>5} {:>10} {:>12} {:>8} {:>22} {:>10} {:>10}\n", q.name, rankText(q.rank),
                         q.workRequests, bytesText(q.bytes), q.smallWorkRequests,
                         rateText(q.achievedGbps, q.linkRateMbps), latencyText(q.latencyP50Ns),
                         latencyText(q.latencyP99Ns));
    o += "RDMA traffic by the call that posted it\n";
    for (const auto& c : r.causes)
        o += fmt::format("  {:<28} {:<20} {:>6} instances {:>10} WRs {:>12}\n", callText(c),
                         c.communicator.empty() ? "-" : c.communicator, c.instances, c.workRequests,
                         bytesText(c.bytes));
    return o;
}

std::string rdmaMarkdown(const Analysis& a) {
    const RdmaAnalysis& r = a.rdma;
    if (!r.any()) return {};
    std::string o = "### RDMA traffic per queue pair\n\n| queue | rank | work requests | bytes | small | achieved |"
                     " p50 latency | p99 latency |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const auto& q : r.queues)
        o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} |\n", markdownEscape(q.name), rankText(q.rank),
                         q.workRequests, bytesText(q.bytes), q.smallWorkRequests,
                         rateText(q.achievedGbps, q.linkRateMbps), latencyText(q.latencyP50Ns),
                         latencyText(q.latencyP99Ns));
    o += "\n### RDMA traffic by the call that posted it\n\n| call | communicator | instances | work requests | bytes |\n"
         "|---|---|---:|---:|---:|\n";
    for (const auto& c : r.causes)
        o += fmt::format("| {} | {} | {} | {} | {} |\n", markdownEscape(callText(c)),
                         c.communicator.empty() ? "-" : markdownEscape(c.communicator), c.instances, c.workRequests,
                         bytesText(c.bytes));
    return o + "\n";
}

std::string rdmaHtml(const Analysis& a) {
    const RdmaAnalysis& r = a.rdma;
    if (!r.any()) return {};
    std::string s = "<h2>RDMA</h2>\n<h3>Per queue pair</h3>\n";
    s += "<table><tr><th>queue</th><th>rank</th><th>work requests</th><th>bytes</th><th>small (&lt; 4 KiB)</th>"
         "<th>achieved</th><th>peak</th><th>latency p50</th><th>p90</th><th>p99</th><th>max</th>"
         "<th>bandwidth over time</th></tr>\n";
    const int sparkW = 160, sparkH = 20;
    for (const auto& q : r.queues) {
        // Bandwidth over time as a sparkline, scaled to the link rate when known.
        std::string spark;
        if (!q.gbpsOverTime.empty()) {
            const double top = std::max(q.linkRateMbps > 0 ? double(q.linkRateMbps) / 1000.0 : 0.0,
                                        std::max(q.peakBinGbps, 1e-9));
            const double bw = double(sparkW) / double(q.gbpsOverTime.size());
            std::string pts;
            for (size_t b = 0; b < q.gbpsOverTime.size(); ++b)
                pts += fmt::format("{:.1f},{:.1f} ", (double(b) + 0.5) * bw,
                                   double(sparkH) - double(sparkH - 2) * q.gbpsOverTime[b] / top);
            spark = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\""
                                " aria-label=\"bandwidth over time\"><polyline points=\"{}\" fill=\"none\""
                                " stroke=\"#e15759\" stroke-width=\"1\"/></svg>",
                                sparkW, sparkH, pts);
        }
        s += fmt::format("<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                         "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{:.3g} Gb/s</td>"
                         "<td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                         "<td>{}</td></tr>\n",
                         htmlEscape(q.name), rankText(q.rank), q.workRequests, htmlEscape(bytesText(q.bytes)),
                         q.smallWorkRequests, htmlEscape(rateText(q.achievedGbps, q.linkRateMbps)), q.peakBinGbps,
                         htmlEscape(latencyText(q.latencyP50Ns)), htmlEscape(latencyText(q.latencyP90Ns)),
                         htmlEscape(latencyText(q.latencyP99Ns)), htmlEscape(latencyText(q.latencyMaxNs)), spark);
    }
    s += "</table>\n<h3>Per rank</h3>\n<table><tr><th>rank</th><th>work requests</th><th>bytes</th>"
         "<th>small per second</th><th>achieved</th></tr>\n";
    for (const auto& k : r.ranks)
        s += fmt::format("<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                         "<td class=\"n\">{:.1f}</td><td class=\"n\">{}</td></tr>\n",
                         rankText(k.rank), k.workRequests, htmlEscape(bytesText(k.bytes)), k.smallMessageRatePerS,
                         htmlEscape(rateText(k.achievedGbps, k.linkRateMbps)));
    s += "</table>\n<h3>By the call that posted it</h3>\n<table><tr><th>call</th><th>communicator</th>"
         "<th>instances</th><th>work requests</th><th>bytes</th></tr>\n";
    for (const auto& c : r.causes)
        s += fmt::format("<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>"
                         "<td class=\"n\">{}</td></tr>\n",
                         htmlEscape(callText(c)), c.communicator.empty() ? "-" : htmlEscape(c.communicator),
                         c.instances, c.workRequests, htmlEscape(bytesText(c.bytes)));
    return s + "</table>\n";
}

class RdmaReport final : public ReportSection {
public:
    std::string_view name() const override { return "rdma"; }
    void json(const Analysis& a, nlohmann::json& doc) const override {
        if (a.rdma.any()) doc["rdma"] = rdmaJson(a);
    }
    std::string text(const Analysis& a) const override { return rdmaText(a); }
    std::string markdown(const Analysis& a) const override { return rdmaMarkdown(a); }
    std::string html(const Analysis& a) const override { return rdmaHtml(a); }
};

} // namespace

} // namespace hpcprof::report::detail

namespace hpcprof::report {
std::unique_ptr<ReportSection> makeRdmaReport() { return std::make_unique<detail::RdmaReport>(); }
} // namespace hpcprof::report

// SPDX-License-Identifier: MIT
// The gpu section's tables in the text, markdown and HTML reports: each table is built once as
// cells and rendered in the three formats; HTML adds a chart of the launch-queue depth. Kernel
// names are shortened here (hpcprof/report/kernel_names.hpp); the JSON report keeps them whole.
#include <fmt/format.h>

#include <algorithm>

#include "gpu_report.hpp"
#include "gpu_section.hpp"
#include "hpcprof/report/writers.hpp"
#include "hpcprof/report/kernel_names.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;

namespace {

/// Ranks whose top kernels the tables list, and kernels per rank; the JSON report has them all.
constexpr size_t kRanksListed = 8;
constexpr size_t kKernelsListed = 10;

struct Table {
    std::string title, note;
    std::vector<std::string> head;
    std::vector<std::vector<std::string>> rows;
    bool lastIsText = false; ///< the last column is left-aligned text (a name)
};

std::string dur(double ns) { return formatDuration(ns); }

std::string bytesText(int64_t b) {
    const double v = double(b);
    if (v >= 1e9) return fmt::format("{:.2f} GB", v / 1e9);
    if (v >= 1e6) return fmt::format("{:.2f} MB", v / 1e6);
    if (v >= 1e3) return fmt::format("{:.2f} kB", v / 1e3);
    return fmt::format("{} B", b);
}

std::string pct(int64_t part, int64_t whole) {
    return whole > 0 ? fmt::format("{:.1f}%", 100.0 * double(part) / double(whole)) : "-";
}

Table classTable(const GpuSection& g) {
    Table t{"GPU kernel classes per rank (busy time in the window; overlap: both at once)", {},
            {"rank", "compute", "communication", "memory", "comm || compute", "of comm", "memory || compute",
             "comm || memory"}, {}, false};
    for (const auto& r : g.ranks) {
        const int64_t comm = r.classes[int(KernelClass::Communication)].busyNs;
        t.rows.push_back({std::to_string(r.rank), dur(double(r.classes[0].busyNs)), dur(double(comm)),
                          dur(double(r.classes[2].busyNs)), dur(double(r.commComputeOverlapNs)),
                          pct(r.commComputeOverlapNs, comm), dur(double(r.memoryComputeOverlapNs)),
                          dur(double(r.commMemoryOverlapNs))});
    }
    return t;
}

std::vector<std::string> latencyCells(const LatencyStats& s) {
    if (s.count == 0) return {"0", "-", "-", "-", "-"};
    return {std::to_string(s.count), dur(s.meanNs), dur(double(s.medianNs)), dur(double(s.p95Ns)),
            dur(double(s.maxNs))};
}

Table launchTable(const GpuSection& g) {
    Table t{"Kernel launch latency (API call start to kernel start) and launch queue (kernels launched, "
            "not started)", {}, {"rank", "launched", "mean", "median", "p95", "max", "no call", "queue max",
                                 "queue mean"}, {}, false};
    for (const auto& r : g.ranks) {
        auto row = latencyCells(r.launch);
        row.insert(row.begin(), std::to_string(r.rank));
        row.push_back(std::to_string(r.unmatchedKernels));
        row.push_back(std::to_string(r.queue.max));
        row.push_back(fmt::format("{:.2f}", r.queue.mean));
        t.rows.push_back(std::move(row));
    }
    auto all = latencyCells(g.launch);
    all.insert(all.begin(), "all");
    all.insert(all.end(), {"", "", ""});
    t.rows.push_back(std::move(all));
    return t;
}

Table copyTable(const GpuSection& g) {
    Table t{"GPU copies and sets by direction (all ranks; GB/s = bytes / copy time)", {},
            {"direction", "count", "bytes", "time", "GB/s"}, {}, false};
    for (const auto& c : g.copies)
        t.rows.push_back({c.direction, std::to_string(c.count), bytesText(c.bytes), dur(double(c.durNs)),
                          fmt::format("{:.3f}", c.gbPerS())});
    return t;
}

Table kernelTable(const GpuKernelRank& r) {
    Table t{fmt::format("Kernels of rank {} by total time (names shortened, full in the JSON report)", r.rank),
            {}, {"count", "total", "mean", "min", "max", "std", "launch p50", "launch p95", "class", "kernel"},
            {}, true};
    const size_t listed = std::min(kKernelsListed, r.kernels.size());
    std::vector<std::string_view> names;
    for (size_t i = 0; i < listed; ++i) names.push_back(r.kernels[i].name);
    const std::vector<std::string> shorts = shortKernelNames(names);
    for (size_t i = 0; i < listed; ++i) {
        const KernelNameStats& k = r.kernels[i];
        const bool launched = k.launch.count > 0;
        t.rows.push_back({std::to_string(k.count), dur(double(k.totalNs)), dur(k.meanNs), dur(double(k.minNs)),
                          dur(double(k.maxNs)), dur(k.stdNs), launched ? dur(double(k.launch.medianNs)) : "-",
                          launched ? dur(double(k.launch.p95Ns)) : "-", kernelClassName(k.cls),
                          shorts[i]});
    }
    if (r.kernels.size() > kKernelsListed)
        t.note = fmt::format("{} more kernel names in the JSON report", r.kernels.size() - kKernelsListed);
    return t;
}

/// Every table of the section, in report order.
std::vector<Table> tables(const GpuSection& g) {
    std::vector<Table> all{classTable(g), launchTable(g)};
    if (!g.copies.empty()) all.push_back(copyTable(g));
    for (size_t i = 0; i < std::min(kRanksListed, g.ranks.size()); ++i)
        if (!g.ranks[i].kernels.empty()) all.push_back(kernelTable(g.ranks[i]));
    if (g.ranks.size() > kRanksListed)
        all.back().note += fmt::format("{}kernels of {} more ranks in the JSON report", all.back().note.empty() ? "" : "; ",
                                       g.ranks.size() - kRanksListed);
    return all;
}

std::string textTable(const Table& t) {
    std::vector<size_t> width(t.head.size());
    for (size_t c = 0; c < t.head.size(); ++c) {
        width[c] = t.head[c].size();
        for (const auto& row : t.rows) width[c] = std::max(width[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s = " ";
        for (size_t c = 0; c < cells.size(); ++c) {
            const bool left = t.lastIsText && c + 1 == cells.size();
            s += left ? fmt::format(" {}", cells[c]) : fmt::format(" {:>{}}", cells[c], width[c]);
        }
        return s + "\n";
    };
    std::string o = "\n" + t.title + "\n" + line(t.head);
    for (const auto& row : t.rows) o += line(row);
    if (!t.note.empty()) o += "  (" + t.note + ")\n";
    return o;
}

std::string markdownTable(const Table& t) {
    std::string o = "### " + markdownEscape(t.title) + "\n\n|";
    for (const auto& h : t.head) o += " " + markdownEscape(h) + " |";
    o += "\n|";
    for (size_t c = 0; c < t.head.size(); ++c) o += (t.lastIsText && c + 1 == t.head.size()) ? "---|" : "---:|";
    o += "\n";
    for (const auto& row : t.rows) {
        o += "|";
        for (const auto& cell : row) o += " " + markdownEscape(cell) + " |";
        o += "\n";
    }
    if (!t.note.empty()) o += "\n" + markdownEscape(t.note) + ".\n";
    return o + "\n";
}

std::string htmlTable(const Table& t) {
    std::string o = "<h3>" + htmlEscape(t.title) + "</h3>\n<table><tr>";
    for (const auto& h : t.head) o += "<th>" + htmlEscape(h) + "</th>";
    o += "</tr>\n";
    for (const auto& row : t.rows) {
        o += "<tr>";
        for (size_t c = 0; c < row.size(); ++c) {
            const bool text = t.lastIsText && c + 1 == row.size();
            o += (text ? "<td>" : "<td class=\"n\">") + htmlEscape(row[c]) + "</td>";
        }
        o += "</tr>\n";
    }
    o += "</table>\n";
    if (!t.note.empty()) o += "<p>" + htmlEscape(t.note) + ".</p>\n";
    return o;
}

/// The depth a chart row's full height stands for: the largest of the ranks shown (at least 1).
int64_t chartTop(const GpuSection& g) {
    int64_t top = 1;
    for (size_t i = 0; i < std::min(kRanksListed, g.ranks.size()); ++i) top = std::max(top, g.ranks[i].queue.max);
    return top;
}

/// Launch-queue depth over the window, one row per rank: bars of the largest depth per bucket,
/// a line of the time-weighted mean, both scaled to the largest depth of the ranks shown.
std::string queueChart(const GpuSection& g) {
    const size_t n = std::min(kRanksListed, g.ranks.size());
    const int64_t top = chartTop(g);
    const int rowH = 40, labelW = 70, width = 760;
    std::string s = fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\""
                                " aria-label=\"launch queue depth over time\">\n",
                                labelW + width + 10, int(n) * (rowH + 6) + 4);
    for (size_t i = 0; i < n; ++i) {
        const QueueDepthStats& q = g.ranks[i].queue;
        const int y0 = int(i) * (rowH + 6) + rowH;
        s += fmt::format("<text x=\"0\" y=\"{}\" font-size=\"11\">rank {}</text>", y0 - rowH / 2, g.ranks[i].rank);
        if (q.maxSeries.empty()) continue;
        const double bw = double(width) / double(q.maxSeries.size());
        std::string line;
        for (size_t b = 0; b < q.maxSeries.size(); ++b) {
            const double h = double(rowH) * double(q.maxSeries[b]) / double(top);
            const double x = labelW + double(b) * bw;
            if (h > 0)
                s += fmt::format("<rect x=\"{:.2f}\" y=\"{:.2f}\" width=\"{:.2f}\" height=\"{:.2f}\" fill=\"#a0cbe8\">"
                                 "<title>rank {} at {}: up to {} queued, mean {:.2f}</title></rect>",
                                 x, y0 - h, std::max(1.0, bw - 0.5), h, g.ranks[i].rank,
                                 htmlEscape(dur(double(q.beginNs + int64_t(b) * q.bucketNs))), q.maxSeries[b],
                                 q.meanSeries[b]);
            line += fmt::format("{}{:.2f},{:.2f}", line.empty() ? "" : " ", x + bw / 2,
                                y0 - double(rowH) * q.meanSeries[b] / double(top));
        }
        s += "<polyline fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\" points=\"" + line + "\"/>\n";
    }
    return s + "</svg>\n";
}

} // namespace

std::string gpuText(const Analysis& a) {
    const GpuSection* g = gpuSection(a);
    if (!g) return {};
    std::string o;
    for (const Table& t : tables(*g)) o += textTable(t);
    return o;
}

std::string gpuMarkdown(const Analysis& a) {
    const GpuSection* g = gpuSection(a);
    if (!g) return {};
    std::string o;
    for (const Table& t : tables(*g)) o += markdownTable(t);
    return o;
}

std::string gpuHtml(const Analysis& a) {
    const GpuSection* g = gpuSection(a);
    if (!g) return {};
    std::vector<Table> all = tables(*g);
    std::string o = "<h2>GPU kernels</h2>\n" + htmlTable(all[0]) + htmlTable(all[1]);
    o += fmt::format("<h3>Launch queue depth over time (bars: the largest per {}; line: the mean; "
                     "full height: {} kernels)</h3>\n",
                     htmlEscape(dur(double(g->ranks.front().queue.bucketNs))), chartTop(*g));
    o += queueChart(*g);
    for (size_t i = 2; i < all.size(); ++i) o += htmlTable(all[i]);
    return o;
}

} // namespace hpcprof::report::detail

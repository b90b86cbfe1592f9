// SPDX-License-Identifier: MIT
// Markdown report for CI job summaries (GitHub/GitLab render it). Names from the trace are
// escaped, since markdown renderers also accept raw HTML.
#include <fmt/format.h>

#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;

namespace {
std::string dur(int64_t ns) { return formatDuration(double(ns)); }

/// The files that are not the program's data, with their class.
std::string otherFilesMarkdown(const std::vector<TopItem>& other) {
    if (other.empty()) return {};
    std::string o = "### Other files\n\nRuntime, /proc and /sys, devices, pipes and sockets: not in the I/O "
                    "findings.\n\n| class | name | calls | total | max |\n|---|---|---:|---:|---:|\n";
    for (const auto& t : other)
        o += fmt::format("| {} | {} | {} | {} | {} |\n", fileClassOf(t), markdownEscape(t.name), t.count,
                         dur(t.totalNs), dur(t.maxNs));
    return o + "\n";
}

/// Workers, launchers and other processes that are not ranks.
std::string processesMarkdown(const Analysis& a) {
    const std::vector<ProcessCells> rows = processCells(a);
    if (rows.empty()) return {};
    std::string o = "### Processes that are not ranks\n\n| role | pid | of | compute | io | sync | idle | parent waited | "
                    "command |\n|---|---:|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& c : rows)
        o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", c.role, c.pid, c.of, c.compute, c.io,
                         c.sync, c.idle, c.parentWaited, markdownEscape(c.command));
    return o + "\n";
}

/// The per-rank table and the stragglers.
std::string ranksMarkdown(const Analysis& a) {
    std::string o;
    o += std::string(unitNoun(a, 2) == "ranks" ? "### Ranks" : "### Processes") + "\n\n| " + unitNoun(a, 1) + " | compute | comm | io | memory | sync | setup | idle | wait |\n"
         "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    const RankRows shown = chooseRankRows(computeKey(a), "compute");
    for (size_t i : shown.rows) {
        const RankBreakdown& r = a.ranks[i];
        o += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.rank, dur(r.ns(TimeClass::Compute)),
                         dur(r.ns(TimeClass::Communication)), dur(r.ns(TimeClass::Io)), dur(r.ns(TimeClass::Memory)),
                         dur(r.ns(TimeClass::Sync)), dur(r.ns(TimeClass::Setup)), dur(r.ns(TimeClass::Idle)),
                         dur(r.waitNs));
    }
    o += shown.summary.empty() ? "\n" : "\n" + shown.summary + "\n\n";
    if (const std::string waits = waitStatesLine(a.waits); !waits.empty())
        o += "### Wait states\n\n" + markdownEscape(waits) + ".\n\n";
    if (!a.waits.stragglers.empty()) {
        o += "### Stragglers\n\n| rank | last in | others waited | where |\n|---:|---:|---:|---|\n";
        const auto& all = a.waits.stragglers;
        for (size_t i = 0; i < all.size() && i < kStragglerRows; ++i) { // "-": late in messages only
            const Straggler& st = all[i];
            o += fmt::format("| {} | {} | {} | {} |\n", st.rank,
                             st.instances > 0 ? fmt::format("{} of {}", st.timesLast, st.instances) : "-",
                             dur(st.inflictedWaitNs), inflictedSplit(st));
        }
        const std::string more = stragglersLeftOut(a);
        o += more.empty() ? "\n" : "\n" + more + ".\n\n";
    }
    return o;
}

/// The commands that open the GUI at each finding and example event, under the findings table.
std::string viewCommandsMarkdown(const Analysis& a) {
    std::string o = "Open in the timeline:\n\n";
    for (const auto& f : a.findings) {
        o += "- " + markdownEscape(viewCommandLine(a, "--finding", f.id));
        for (int64_t id : f.eventIds)
            o += "; example event " + std::to_string(id) + ": " +
                 markdownEscape(viewCommandLine(a, "--event", std::to_string(id)));
        o += "\n";
    }
    return o + "\n";
}

/// The findings table, exclusive gains first (docs/analysis.md, "Findings and their gains").
std::string findingsMarkdown(const Analysis& a) {
    std::string o = "### Findings\n\n";
    if (a.findings.empty()) o += "No findings.\n\n";
    else {
        o += fmt::format("Together the findings could save up to {} of the {}: each counts only the time "
                         "no finding above it already claims (alone: up to the second figure).\n\n",
                         dur(a.findingsGainNs), markdownEscape(gainSpanText(a)));
        o += fmt::format("| severity | finding | {} | could save (alone) | evidence | suggestion |\n|---|---|---|---:|---|---|\n",
                         unitNoun(a, 2));
        for (const auto& f : a.findings)
            o += fmt::format("| {} | **{}** {} | {} | {} ({}) | {} | {} |\n", severityName(f.severity),
                             markdownEscape(f.id), markdownEscape(f.title), rankList(f.ranks), dur(f.exclusiveGainNs),
                             dur(f.estimatedGainNs),
                             markdownEscape(evidenceText(f)), markdownEscape(f.suggestion));
        o += "\n" + viewCommandsMarkdown(a);
    }
    return o;
}

std::string tableMarkdown(const Table& t) {
    std::string o = "|";
    for (const auto& h : t.header) o += " " + markdownEscape(h) + " |";
    o += "\n|";
    for (size_t i = 0; i < t.header.size(); ++i) o += "---:|";
    o += "\n";
    for (const auto& r : t.rows) {
        o += "|";
        for (const auto& c : r) o += " " + markdownEscape(c) + " |";
        o += "\n";
    }
    if (!t.note.empty()) o += "\n" + markdownEscape(t.note) + "\n";
    return o + "\n";
}

/// The steps: where they come from, each rank's step-time variance, each step's breakdown.
std::string stepsMarkdown(const Analysis& a) {
    if (a.steps.steps.empty()) return {};
    std::string o = fmt::format("### Steps\n\n{}.\n\n", markdownEscape(stepsHeadline(a.steps)));
    o += tableMarkdown(stepRankTable(a));
    size_t left = 0;
    const Table t = stepBreakdownTable(a, 50, left);
    if (t.rows.empty()) return o;
    o += tableMarkdown(t);
    if (left > 0) o += fmt::format("{} more rows in the JSON report.\n\n", left);
    return o;
}

} // namespace

std::string markdownReport(const Analysis& a, const std::vector<GateResult>& gates) {
    const JobSummary& s = a.summary;
    std::string o = "## hpcprof report\n\n";
    o += fmt::format("Trace {}, {}, {} events.\n\nWindow: {}.\n\n", markdownEscape(a.tracePath), unitsText(a),
                     s.events, markdownEscape(windowText(a)));
    if (std::string lost = dataLossList(a); !lost.empty())
        o += fmt::format("> **Partial trace**: {} (see Data quality): what was not recorded is "
                         "missing from every number below.\n\n", markdownEscape(lost));
    if (std::string stopped = recordingStoppedList(a); !stopped.empty())
        o += fmt::format("> **Recording stopped**: {}; each of these ranks is analysed up to that "
                         "moment only.\n\n", markdownEscape(stopped));
    if (!gates.empty()) {
        o += "### Gates\n\n| gate | value | result |\n|---|---:|---|\n";
        for (const auto& g : gates)
            o += fmt::format("| {} | {:.6g} | {} |\n", markdownEscape(g.gate.text), g.value,
                             g.failed ? "**FAILED**" : "passed");
        o += "\n";
    }
    o += "### Where the time went\n\n| class | share | hidden behind compute |\n|---|---:|---:|\n";
    o += fmt::format("| compute | {:.1f}% | |\n", s.pct(TimeClass::Compute));
    o += fmt::format("| communication (exposed) | {:.1f}% | {:.1f}% |\n", s.pct(TimeClass::Communication),
                     s.commTotalNs ? 100.0 * double(s.commOverlappedNs) / double(s.commTotalNs) : 0.0);
    o += fmt::format("| I/O (exposed) | {:.1f}% | {:.1f}% |\n", s.pct(TimeClass::Io),
                     s.ioTotalNs ? 100.0 * double(s.ioOverlappedNs) / double(s.ioTotalNs) : 0.0);
    o += fmt::format("| memory copies | {:.1f}% | |\n| sync | {:.1f}% | |\n| setup (MPI start-up, shutdown, communicators) | {:.1f}% | |\n"
                     "| idle | {:.1f}% | |\n\n",
                     s.pct(TimeClass::Memory), s.pct(TimeClass::Sync), s.pct(TimeClass::Setup), s.pct(TimeClass::Idle));
    const PopMetrics& p = a.pop;
    o += fmt::format("### POP metrics\n\nComputed {}.\n\n| metric | value |\n|---|---:|\n",
                     p.region == "window" ? "on the whole window" : "between MPI_Init and MPI_Finalize of each rank");
    o += fmt::format("| parallel efficiency | {:.3f} |\n| load balance | {:.3f} |\n| communication efficiency | {:.3f} |\n"
                     "| serialisation efficiency | {:.3f} |\n| transfer efficiency | {:.3f} |\n\n",
                     p.parallelEfficiency, p.loadBalance, p.communicationEfficiency, p.serialisationEfficiency,
                     p.transferEfficiency);
    o += findingsMarkdown(a);
    o += ranksMarkdown(a) + processesMarkdown(a) + stepsMarkdown(a);
    auto top = [&](const char* title, const std::vector<TopItem>& items) {
        if (items.empty()) return;
        o += fmt::format("### {}\n\n| name | calls | total | max |\n|---|---:|---:|---:|\n", title);
        for (const auto& t : items)
            o += fmt::format("| {} | {} | {} | {} |\n", markdownEscape(t.name), t.count, dur(t.totalNs), dur(t.maxNs));
        o += "\n";
    };
    top("Top kernels", withShortKernelNames(a.topKernels));
    top("Top communication calls", a.topCommunication);
    const FileLists files = splitFiles(a);
    top("Top files (the program's data)", files.data);
    o += otherFilesMarkdown(files.other);
    for (const auto& section : reportSections()) o += section->markdown(a);
    if (!a.warnings.empty()) {
        o += "### Data quality\n\n";
        for (const auto& w : a.warnings)
            o += fmt::format("- **{}** = {}: {}\n", markdownEscape(w.name), w.count, markdownEscape(w.message));
    }
    return o;
}

std::string markdownDiff(const AnalysisDiff& d, const std::vector<GateResult>& gates) {
    std::string o = "## hpcprof diff\n\n";
    o += fmt::format("{} → {}: {}.\n\n{}.\n\n", markdownEscape(d.basePath), markdownEscape(d.newPath),
                     diffHeadline(d), noiseFloorText(d));
    if (!gates.empty()) {
        o += "| gate | value | result |\n|---|---:|---|\n";
        for (const auto& g : gates)
            o += fmt::format("| {} | {:.6g} | {} |\n", markdownEscape(g.gate.text), g.value,
                             g.failed ? "**FAILED**" : "passed");
        o += "\n";
    }
    o += "| scope | name | base | new | change | |\n|---|---|---:|---:|---:|---|\n";
    for (const auto& r : d.rows) {
        if (!diffRowListed(r)) continue;
        o += fmt::format("| {} | {} | {} | {} | {} | {} |\n", r.scope, markdownEscape(r.name), diffValueText(r, r.base),
                         diffValueText(r, r.next), diffChangeText(r),
                         r.regression() ? "**regression**" : verdictName(r.verdict));
    }
    if (size_t hidden = diffRowsNotListed(d))
        o += fmt::format("\n{} rank, kernel, collective, call and file rows within the noise floor are not listed.\n", hidden);
    return o;
}

} // namespace hpcprof::report::detail

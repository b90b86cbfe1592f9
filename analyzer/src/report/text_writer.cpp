// SPDX-License-Identifier: MIT
// Plain-text report for the terminal: summary, POP metrics, per-rank table, stragglers, steps,
// top lists, RDMA traffic (when recorded), findings, gates, data-quality warnings.
#include <fmt/format.h>

#include "report_section.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace hpcprof::analyzer;

FileLists splitFiles(const Analysis& a) {
    FileLists lists;
    for (const auto& t : a.topFiles)
        (t.fileClass == FileClass::Data ? lists.data : lists.other).push_back(t);
    return lists;
}

std::string fileClassOf(const TopItem& t) { return t.fileClass ? fileClassName(*t.fileClass) : ""; }

/// The files that are not the program's data, with their class.
namespace {
std::string otherFilesText(const std::vector<TopItem>& other) {
    if (other.empty()) return {};
    std::string o = "\nOther files (runtime, /proc and /sys, devices, pipes and sockets; not in the I/O findings)\n";
    for (const auto& t : other)
        o += fmt::format("  {:>10} {:>8} calls  {:<9}  {}\n", formatDuration(double(t.totalNs)), t.count,
                         fileClassOf(t), t.name);
    return o;
}
} // namespace

std::string gateLine(const GateResult& g) {
    return fmt::format("{}: value {:.6g} -> {}", g.gate.text, g.value, g.failed ? "FAILED" : "passed");
}

std::string evidenceText(const Finding& f) {
    std::string out;
    for (const auto& e : f.evidence) {
        if (!out.empty()) out += ", ";
        if (e.unit == "ns")
            out += fmt::format("{}={}", e.key, formatDuration(e.value));
        else if (e.unit == "pct")
            out += fmt::format("{}={:.1f}%", e.key, e.value);
        else if (e.unit == "bytes_per_s")
            out += fmt::format("{}={:.3g} GB/s", e.key, e.value / 1e9);
        else
            out += fmt::format("{}={}", e.key, formatNumber(e.value));
    }
    return out;
}

std::string gainText(const Finding& f) {
    const std::string alone = formatDuration(double(f.estimatedGainNs));
    if (f.exclusiveGainNs <= 0 && f.estimatedGainNs > 0)
        return fmt::format("up to {} alone, all of it time a finding above already counts", alone);
    if (f.exclusiveGainNs == f.estimatedGainNs) return "could save " + alone;
    return fmt::format("could save {}, up to {} alone", formatDuration(double(f.exclusiveGainNs)), alone);
}

std::string dataLossList(const Analysis& a) {
    std::string out;
    for (const auto& w : a.warnings)
        if (w.message.rfind("data_loss:", 0) == 0 || w.message.rfind("error:", 0) == 0)
            out += fmt::format("{}{} = {}", out.empty() ? "" : ", ", w.name, w.count);
    return out;
}

std::string recordingStoppedList(const Analysis& a) {
    std::string out;
    for (const auto& r : a.ranks)
        if (r.recordingStoppedTs)
            out += fmt::format("{}rank {} at {} ({})", out.empty() ? "" : ", ", r.rank,
                               formatDuration(double(*r.recordingStoppedTs)), r.stopReason);
    return out;
}

std::string rankList(const std::vector<int64_t>& ranks) {
    std::string out;
    for (int64_t r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
    return out.empty() ? "-" : out;
}

/// "Where the time went": the job's exclusive classes, set-up on its own line.
std::string breakdownText(const JobSummary& s) {
    std::string o = "Where the time went (all ranks)\n";
    o += fmt::format("  compute        {:6.1f}%\n", s.pct(TimeClass::Compute));
    o += fmt::format("  communication  {:6.1f}% exposed   ({:.1f}% of {} hidden behind compute)\n",
                     s.pct(TimeClass::Communication),
                     s.commTotalNs ? 100.0 * double(s.commOverlappedNs) / double(s.commTotalNs) : 0.0,
                     formatDuration(double(s.commTotalNs)));
    o += fmt::format("  I/O            {:6.1f}% exposed   ({:.1f}% of {} hidden behind compute)\n",
                     s.pct(TimeClass::Io), s.ioTotalNs ? 100.0 * double(s.ioOverlappedNs) / double(s.ioTotalNs) : 0.0,
                     formatDuration(double(s.ioTotalNs)));
    o += fmt::format("  memory copies  {:6.1f}%\n", s.pct(TimeClass::Memory));
    o += fmt::format("  sync           {:6.1f}%\n", s.pct(TimeClass::Sync));
    o += fmt::format("  setup          {:6.1f}%            (MPI start-up and shutdown, communicators, windows)\n",
                     s.pct(TimeClass::Setup));
    o += fmt::format("  idle           {:6.1f}%\n\n", s.pct(TimeClass::Idle));
    return o;
}

std::string popText(const PopMetrics& p) {
    if (p.region == "none")
        return "POP: not computed (several processes of a program without ranks are not a parallel "
               "decomposition)\n\n";
    return fmt::format("POP: parallel efficiency {:.3f} = load balance {:.3f} x communication efficiency {:.3f}"
                       " (serialisation {:.3f} x transfer {:.3f}), {}\n\n",
                       p.parallelEfficiency, p.loadBalance, p.communicationEfficiency, p.serialisationEfficiency,
                       p.transferEfficiency,
                       p.region == "window" ? "on the whole window"
                                            : "between MPI_Init and MPI_Finalize of each rank");
}

std::string rankTable(const Analysis& a) {
    auto d = [](int64_t ns) { return formatDuration(double(ns)); };
    std::string o = fmt::format("{:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", unitNoun(a, 1),
                                "compute", "comm", "io", "memory", "sync", "setup", "idle", "wait", "gpu idle");
    const RankRows shown = chooseRankRows(computeKey(a), "compute");
    for (size_t i : shown.rows) {
        const RankBreakdown& r = a.ranks[i];
        o += fmt::format("{:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10}\n", r.rank,
                         d(r.ns(TimeClass::Compute)), d(r.ns(TimeClass::Communication)), d(r.ns(TimeClass::Io)),
                         d(r.ns(TimeClass::Memory)), d(r.ns(TimeClass::Sync)), d(r.ns(TimeClass::Setup)),
                         d(r.ns(TimeClass::Idle)), d(r.waitNs), r.gpu ? d(r.gpuIdleNs) : "-");
    }
    if (!shown.summary.empty()) o += "  (" + shown.summary + ")\n";
    return o;
}

/// A table in fixed-width, right-aligned columns.
std::string tableText(const Table& t) {
    std::vector<size_t> width(t.header.size(), 0);
    auto widen = [&](const std::vector<std::string>& row) {
        for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], row[i].size());
    };
    widen(t.header);
    for (const auto& r : t.rows) widen(r);
    auto line = [&](const std::vector<std::string>& row) {
        std::string l = " ";
        for (size_t i = 0; i < row.size() && i < width.size(); ++i) l += fmt::format(" {:>{}}", row[i], width[i]);
        return l + "\n";
    };
    std::string o = line(t.header);
    for (const auto& r : t.rows) o += line(r);
    if (!t.note.empty()) o += "  (" + t.note + ")\n";
    return o;
}

/// The steps: where they come from, each rank's step-time variance, each step's breakdown.
std::string stepsText(const Analysis& a) {
    if (a.steps.steps.empty()) return {};
    std::string o = fmt::format("\nSteps: {}\n", stepsHeadline(a.steps));
    o += tableText(stepRankTable(a));
    size_t left = 0;
    const Table t = stepBreakdownTable(a, 20, left);
    if (t.rows.empty()) return o;
    o += "\nPer step\n" + tableText(t);
    if (left > 0) o += fmt::format("  ... {} more rows in the JSON report\n", left);
    return o;
}

std::string unitNoun(const Analysis& a, size_t count) {
    bool ranks = a.processes.empty(); // traces without a process list keep the word they always had
    for (const auto& p : a.processes) ranks = ranks || p.role == ProcessRole::Rank;
    if (ranks) return count == 1 ? "rank" : "ranks";
    return count == 1 ? "process" : "processes";
}

std::string unitsText(const Analysis& a) {
    const JobSummary& s = a.summary;
    size_t workers = 0;
    for (const auto& p : a.processes) workers += p.role == ProcessRole::Worker ? 1 : 0;
    const std::string withWorkers =
        workers == 0 ? "" : fmt::format(" with {} worker{}", workers, workers == 1 ? "" : "s");
    return fmt::format("{} {}{} ({} GPU)", s.rankCount, unitNoun(a, size_t(s.rankCount)), withWorkers,
                       s.gpuRankCount);
}

std::vector<ProcessCells> processCells(const Analysis& a) {
    auto d = [](int64_t ns) { return formatDuration(double(ns)); };
    std::vector<ProcessCells> rows;
    for (const auto& p : a.processes) {
        if (p.role == ProcessRole::Rank || p.role == ProcessRole::Main) continue;
        ProcessCells c{processRoleName(p.role), std::to_string(p.pid), p.unit ? std::to_string(*p.unit) : "-",
                       "-", "-", "-", "-", "-", p.command.substr(0, 40)};
        if (p.breakdown) {
            const RankBreakdown& b = *p.breakdown;
            c.compute = d(b.ns(TimeClass::Compute));
            c.io = d(b.ns(TimeClass::Io));
            c.sync = d(b.ns(TimeClass::Sync));
            c.idle = d(b.ns(TimeClass::Idle));
            if (p.role == ProcessRole::Worker) c.parentWaited = d(p.waitedForNs);
        }
        rows.push_back(std::move(c));
    }
    return rows;
}

/// Workers and other processes that are not ranks, each with its own breakdown, and launchers.
std::string processTable(const Analysis& a) {
    const std::vector<ProcessCells> rows = processCells(a);
    if (rows.empty()) return {};
    std::string o = fmt::format("\nProcesses that are not ranks\n{:>8} {:>8} {:>6} {:>10} {:>10} {:>10} {:>10} {:>12}  {}\n",
                                "role", "pid", "of", "compute", "io", "sync", "idle", "parent waited", "command");
    for (const auto& c : rows)
        o += fmt::format("{:>8} {:>8} {:>6} {:>10} {:>10} {:>10} {:>10} {:>12}  {}\n", c.role, c.pid, c.of, c.compute,
                         c.io, c.sync, c.idle, c.parentWaited, c.command);
    return o;
}

/// One straggler: the collectives it entered last only when it took part in any (a program
/// that only sends and receives has none to count).
std::string stragglerLine(const Straggler& st) {
    const std::string last =
        st.instances > 0 ? fmt::format("last in {} of {} collectives, ", st.timesLast, st.instances) : "";
    return fmt::format("  rank {:<5} {}others waited {} in total ({})\n", st.rank, last,
                       formatDuration(double(st.inflictedWaitNs)), inflictedSplit(st));
}

namespace {

/// The findings, their exclusive gains first (docs/analysis.md, "Findings and their gains").
std::string findingsText(const Analysis& a) {
    std::string o = "\nFindings\n";
    if (a.findings.empty()) o += "  none\n";
    else
        o += fmt::format("  together they could save up to {} of the {} (each finding: its own share, "
                         "time another finding above already claims not counted again)\n",
                         formatDuration(double(a.findingsGainNs)), gainSpanText(a));
    for (const auto& f : a.findings) {
        o += fmt::format("  [{}] {}: {} ({}; {} {})\n", severityName(f.severity), f.id, f.title, gainText(f),
                         unitNoun(a, f.ranks.size()), rankList(f.ranks));
        o += fmt::format("      evidence: {}\n", evidenceText(f));
        o += fmt::format("      suggestion: {}\n", f.suggestion);
    }
    return o;
}

} // namespace

std::string textReport(const Analysis& a, const std::vector<GateResult>& gates) {
    const JobSummary& s = a.summary;
    std::string o;
    o += fmt::format("hpcprof report: {}\n", a.tracePath);
    o += fmt::format("window: {}\n{}, {} events\n\n", windowText(a), unitsText(a), s.events);
    if (std::string lost = dataLossList(a); !lost.empty())
        o += fmt::format("PARTIAL TRACE: {} (see Data quality): what was not recorded is missing "
                         "from every number below\n\n", lost);
    if (std::string stopped = recordingStoppedList(a); !stopped.empty())
        o += fmt::format("RECORDING STOPPED: {}; each of these ranks is analysed up to that "
                         "moment only\n\n", stopped);
    o += breakdownText(s);
    o += popText(a.pop);
    o += rankTable(a) + processTable(a);
    if (const std::string waits = waitStatesLine(a.waits); !waits.empty()) o += "\nWait states\n  " + waits + "\n";
    if (!a.waits.stragglers.empty()) {
        o += "\nStragglers (others waited for them)\n";
        const auto& all = a.waits.stragglers;
        for (size_t i = 0; i < all.size() && i < kStragglerRows; ++i) o += stragglerLine(all[i]);
        if (const std::string more = stragglersLeftOut(a); !more.empty()) o += "  (" + more + ")\n";
    }
    o += stepsText(a);
    auto top = [&](const char* title, const std::vector<TopItem>& items) {
        if (items.empty()) return;
        o += fmt::format("\n{}\n", title);
        for (const auto& t : items)
            o += fmt::format("  {:>10} {:>8} calls  {}\n", formatDuration(double(t.totalNs)), t.count, t.name);
    };
    top("Top kernels", withShortKernelNames(a.topKernels));
    top("Top communication calls (all ranks; a call made inside another counted as the outer one)",
        a.topCommunication);
    const FileLists files = splitFiles(a);
    top("Top files (the program's data)", files.data);
    o += otherFilesText(files.other);
    for (const auto& section : reportSections()) o += section->text(a);
    o += findingsText(a);
    if (!gates.empty()) {
        o += "\nGates\n";
        for (const auto& g : gates) o += "  " + gateLine(g) + "\n";
    }
    if (!a.warnings.empty()) {
        o += "\nData quality\n";
        for (const auto& w : a.warnings) o += fmt::format("  {} = {}: {}\n", w.name, w.count, w.message);
    }
    return o;
}

std::string textDiff(const AnalysisDiff& d, const std::vector<GateResult>& gates) {
    std::string o = fmt::format("hpcprof diff: {} -> {}\n", d.basePath, d.newPath);
    o += diffHeadline(d) + "\n" + noiseFloorText(d) + "\n\n";
    o += fmt::format("{:<10} {:<40} {:>12} {:>12} {:>9}\n", "scope", "name", "base", "new", "change");
    for (const auto& r : d.rows) {
        if (!diffRowListed(r)) continue;
        const char* verdict = r.regression() ? "  REGRESSION" : r.verdict == analyzer::DiffVerdict::Improvement ? "  improvement" : "";
        o += fmt::format("{:<10} {:<40} {:>12} {:>12} {:>9}{}\n", r.scope, r.name, diffValueText(r, r.base),
                         diffValueText(r, r.next), diffChangeText(r), verdict);
    }
    if (size_t hidden = diffRowsNotListed(d))
        o += fmt::format("({} rank, kernel, collective, call and file rows within the noise floor not listed; --format json lists them)\n",
                         hidden);
    if (!gates.empty()) {
        o += "\nGates\n";
        for (const auto& g : gates) o += "  " + gateLine(g) + "\n";
    }
    return o;
}

} // namespace hpcprof::report::detail

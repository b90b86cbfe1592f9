// SPDX-License-Identifier: MIT
// Internal: the per-format writer functions that writeReport/writeDiff dispatch to.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hpcprof/report/writers.hpp"

namespace hpcprof::report::detail {

std::string textReport(const analyzer::Analysis& a, const std::vector<GateResult>& gates);
std::string markdownReport(const analyzer::Analysis& a, const std::vector<GateResult>& gates);
std::string htmlReport(const analyzer::Analysis& a, const std::vector<GateResult>& gates, const WriterOptions& o);
std::string junitReport(const analyzer::Analysis& a, const std::vector<GateResult>& gates, const WriterOptions& o);

std::string textDiff(const analyzer::AnalysisDiff& d, const std::vector<GateResult>& gates);
std::string markdownDiff(const analyzer::AnalysisDiff& d, const std::vector<GateResult>& gates);
std::string htmlDiff(const analyzer::AnalysisDiff& d, const std::vector<GateResult>& gates, const WriterOptions& o);
std::string junitDiff(const analyzer::AnalysisDiff& d, const std::vector<GateResult>& gates);

/// The report document; without `stepItems`, each rank's steps.ranks[k].items is the string
/// stepItemsPlaceholder(k), for jsonReportText() to write in its place item by item (a long
/// multi-rank trace has millions of them: as one document they cost several times the text).
nlohmann::json reportJson(const analyzer::Analysis& a, bool stepItems);
nlohmann::json rankStepJson(const analyzer::RankStep& st);
std::string stepItemsPlaceholder(size_t rankIndex);
/// The JSON report as text, identical to reportJson(a) (gates and version added) dumped with
/// an indent of 2, without holding the per-rank step items as a document.
bool writeJsonReport(const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                     const std::string& hpcprofVersion, const TextSink& sink);
std::string jsonReportText(const analyzer::Analysis& a, const std::vector<GateResult>& gates,
                           const std::string& hpcprofVersion);

/// "comm.exposed_pct > 25: value 31.2 -> FAILED"
std::string gateLine(const GateResult& g);
/// The kernels with the short names report tables show (kernel_names.hpp: no return type,
/// no parameter list, template arguments folded; the JSON report keeps the full names).
std::vector<analyzer::TopItem> withShortKernelNames(std::vector<analyzer::TopItem> kernels);
/// Evidence as "name=value unit, ..."
std::string evidenceText(const analyzer::Finding& f);
/// What a finding could save: "could save 763 ms, up to 1.28 s alone"; "could save 743 ms" when
/// no finding above claims any of it; "up to 787 ms alone, all of it time a finding above
/// already counts" when it adds nothing to them (a plain "could save 0 ns" reads as "no
/// problem" beside its severity, which comes from the time alone).
std::string gainText(const analyzer::Finding& f);
/// `word` as one shell word: unchanged when the shell takes it literally, else in single quotes.
std::string shellQuote(const std::string& word);
/// The command that opens the GUI at a finding or an event of this report:
/// "hpcprof view TRACE --event 42" (option "--event", value "42"), each word shell-quoted.
/// Not escaped for any format: the writer escapes it.
std::string viewCommandLine(const analyzer::Analysis& a, const std::string& option, const std::string& value);
/// Ranks as "0, 3, 7".
std::string rankList(const std::vector<int64_t>& ranks);
/// The data-loss and error counters of the trace as "records_dropped = 20590558, ..."; empty
/// when nothing was lost. Reports say it at the top: the breakdown misses that data.
std::string dataLossList(const analyzer::Analysis& a);
/// The ranks whose window ends early because a thread stopped recording, as "rank 0 at 1.20 s
/// (disk_full), rank 3 at ..."; empty when none did.
std::string recordingStoppedList(const analyzer::Analysis& a);

/// The top files split into the program's data files and the others (runtime, /proc and /sys,
/// devices, pipes and sockets), each list in the analysis's order.
struct FileLists {
    std::vector<analyzer::TopItem> data, other;
};
FileLists splitFiles(const analyzer::Analysis& a);
/// "runtime", "pseudo_fs", ... of a top-list item ("" when it is not a file).
std::string fileClassOf(const analyzer::TopItem& t);

// The diff's shared words (diff_text.cpp).
/// "+20.1%", or "new" (from 0) / "gone" (to 0), which have no percentage.
std::string diffChangeText(const analyzer::DiffRow& r);
/// A row's value: a duration, or a POP efficiency with 3 decimals.
std::string diffValueText(const analyzer::DiffRow& r, double v);
/// Whether the text, markdown and HTML tables list the row (job-level rows, and the others
/// that changed beyond the noise floor), and how many they leave out.
bool diffRowListed(const analyzer::DiffRow& r);
size_t diffRowsNotListed(const analyzer::AnalysisDiff& d);
/// "wall time +3.1%, 0 regression(s), 1 improvement(s)"
std::string diffHeadline(const analyzer::AnalysisDiff& d);
/// The noise floor that applied, in words.
std::string noiseFloorText(const analyzer::AnalysisDiff& d);

/// What the analysed units are: "4 ranks (1 GPU)", or "1 process (0 GPU)" / "3 processes (0 GPU)"
/// for a program without ranks (its main processes are analysed like ranks).
std::string unitsText(const analyzer::Analysis& a);
/// What a row of the per-rank table is: "rank"/"ranks", or "process"/"processes" for the main
/// processes of a program without ranks (by `count`).
std::string unitNoun(const analyzer::Analysis& a, size_t count);

/// One process that is not a rank or a main process (workers, launchers, others), as the
/// report tables show it: durations are "-" for a process that is not analysed (launchers).
struct ProcessCells {
    std::string role, pid, of, compute, io, sync, idle, parentWaited, command;
};
std::vector<ProcessCells> processCells(const analyzer::Analysis& a);

/// A table the text, markdown and HTML writers lay out each their way.
struct Table {
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;
    std::string note; ///< said under the table (rows left out); empty: nothing
};

/// The rows of a per-rank table the text, markdown and HTML reports show (rank_rows.cpp): all
/// up to kAllRankRows; beyond, the kEdgeRankRows rows with the largest and the smallest `key`
/// and up to kMaxOutlierRows outliers of it, in table order, and a summary that says how many
/// rows are left out and the key's distribution (JSON keeps every row).
inline constexpr size_t kAllRankRows = 32, kEdgeRankRows = 5, kMaxOutlierRows = 10;
struct RankRows {
    std::vector<size_t> rows; ///< indices of the rows shown
    size_t omitted = 0;
    std::string summary; ///< empty when every row is shown
};
RankRows chooseRankRows(const std::vector<int64_t>& key, const std::string& keyName);
/// The key of the per-rank breakdown tables: each rank's compute time (imbalance shows there).
std::vector<int64_t> computeKey(const analyzer::Analysis& a);
/// The stragglers the text, markdown and HTML reports list (the worst first); the others are
/// counted under the table.
inline constexpr size_t kStragglerRows = 10;
/// "12 more ranks made others wait less (--format json lists all)", or "" when none is left out.
std::string stragglersLeftOut(const analyzer::Analysis& a);
/// The job's wait time split by kind (late senders, late receivers, collectives, polling), or
/// "" when nobody waited (wait_text.cpp).
std::string waitStatesLine(const analyzer::WaitStates& w);
/// Where a straggler's inflicted wait was: "17 ms in collectives, 605 ms for its messages", or
/// "in collectives" / "for its messages" when it is all one kind.
std::string inflictedSplit(const analyzer::Straggler& s);

/// Which window the report used and why: "steps 0-7 (ProfilerStep (profiler steps)), 2.43 s of
/// 3.37 s recorded; --window all for the whole span" (window_steps.cpp).
std::string windowText(const analyzer::Analysis& a);
/// The span the findings' gains are a share of (POP's region): "316 ms between MPI_Init and
/// MPI_Finalize", "722 ms run" or "300 ms window"; the report's header may name a longer one.
std::string gainSpanText(const analyzer::Analysis& a);
/// "8 steps from ProfilerStep (profiler steps): mean 607 ms, min ..., cv 0.011"
std::string stepsHeadline(const analyzer::StepStats& s);
/// Step-time variance per rank: steps, mean, stddev, min, max.
Table stepRankTable(const analyzer::Analysis& a);
/// Per step and rank: the duration and the exclusive classes inside it (steps from ranges only),
/// the first `maxSteps` steps of each rank; `left` counts the rows left out.
Table stepBreakdownTable(const analyzer::Analysis& a, size_t maxSteps, size_t& left);

} // namespace hpcprof::report::detail

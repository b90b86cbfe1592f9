// SPDX-License-Identifier: MIT
// The words and tables every report format shares for the window and the steps.
#include <fmt/format.h>

#include "hpcprof/report/writers.hpp"
#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using namespace analyzer;

std::string windowText(const Analysis& a) {
    const WindowChoice& w = a.windowChoice;
    const std::string len = formatDuration(double(a.summary.wallNs));
    const std::string recorded = formatDuration(double(w.recordedEnd - w.recordedBegin));
    if (w.basis == "steps" || w.basis == "activity")
        return fmt::format("{}, {} of {} recorded; --window all for the whole span", w.reason, len, recorded);
    if (w.basis == "whole") return fmt::format("whole run ({})", len);
    return fmt::format("{} ({} of {} recorded)", w.reason, len, recorded);
}

std::string gainSpanText(const Analysis& a) {
    const std::string len = formatDuration(double(a.pop.runtimeNs));
    if (a.pop.region == "init_to_finalize") return len + " between MPI_Init and MPI_Finalize";
    return len + (a.windowChoice.basis == "whole" ? " run" : " window");
}

std::string stepsHeadline(const StepStats& s) {
    return fmt::format("{} steps from {}: mean {}, min {}, max {}, cv {:.3f}", s.steps.size(),
                       s.reason.empty() ? s.source : s.reason, formatDuration(double(s.meanNs)),
                       formatDuration(double(s.minNs)), formatDuration(double(s.maxNs)), s.cv);
}

namespace {
/// The classes the step tables show: what a training step's time is made of.
constexpr TimeClass kStepClasses[] = {TimeClass::Compute, TimeClass::Communication, TimeClass::Memory,
                                      TimeClass::Sync, TimeClass::Io, TimeClass::Idle};

/// Each rank's mean step time: the step tables list the slowest, the fastest and the outliers.
std::vector<int64_t> meanStepKey(const Analysis& a) {
    std::vector<int64_t> key;
    for (const RankSteps& r : a.steps.ranks) key.push_back(r.meanNs);
    return key;
}

bool anyGpu(const Analysis& a) {
    for (const auto& r : a.ranks)
        if (r.gpu) return true;
    return false;
}

/// Communication kernels were matched across ranks (step_kernels.hpp): the tables say where each
/// rank's last long one starts in the step and which rank the others waited for.
bool anyCommStart(const Analysis& a) {
    for (const RankSteps& r : a.steps.ranks)
        for (const RankStep& st : r.steps)
            if (st.commStartFraction >= 0) return true;
    return false;
}

/// "others waited 8.2 ms" when `rank` is step `i`'s straggler, else "".
std::string stragglerCell(const Analysis& a, size_t i, int64_t rank) {
    if (i >= a.steps.steps.size() || a.steps.steps[i].stragglerRank != rank) return "";
    return "others waited " + formatDuration(double(a.steps.steps[i].stragglerWaitNs));
}
} // namespace

Table stepRankTable(const Analysis& a) {
    Table t;
    t.header = {unitNoun(a, 1), "steps", "mean", "stddev", "min", "max"};
    const RankRows shown = chooseRankRows(meanStepKey(a), "mean step");
    t.note = shown.summary;
    for (size_t i : shown.rows) {
        const RankSteps& r = a.steps.ranks[i];
        t.rows.push_back({std::to_string(r.rank), std::to_string(r.count), formatDuration(double(r.meanNs)),
                          formatDuration(double(r.stddevNs)), formatDuration(double(r.minNs)),
                          formatDuration(double(r.maxNs))});
    }
    return t;
}

Table stepBreakdownTable(const Analysis& a, size_t maxSteps, size_t& left) {
    Table t;
    const bool gpu = anyGpu(a), comm = anyCommStart(a);
    t.header = {"step", unitNoun(a, 1), "duration"};
    for (TimeClass c : kStepClasses) t.header.push_back(timeClassName(c));
    if (gpu) t.header.push_back("gpu idle");
    if (comm) {
        t.header.push_back("comm starts at");
        t.header.push_back("late");
    }
    left = 0;
    const RankRows shown = chooseRankRows(meanStepKey(a), "mean step");
    std::vector<bool> listed(a.steps.ranks.size(), false);
    for (size_t i : shown.rows) listed[i] = true;
    for (size_t k = 0; k < a.steps.ranks.size(); ++k) {
        const RankSteps& r = a.steps.ranks[k];
        for (const RankStep& st : r.steps) {
            const size_t i = size_t(st.index); // its step (a rank may list only its slowest)
            if (!st.hasBreakdown) continue;
            if (i >= maxSteps || !listed[k]) { // the ranks the step-time table lists
                ++left;
                continue;
            }
            std::vector<std::string> row = {std::to_string(i), std::to_string(r.rank), formatDuration(double(st.durNs()))};
            for (TimeClass c : kStepClasses) row.push_back(formatDuration(double(st.exclusive[int(c)])));
            if (gpu) row.push_back(formatDuration(double(st.gpuIdleNs)));
            if (comm) {
                row.push_back(st.commStartFraction >= 0 ? fmt::format("{:.2f}", st.commStartFraction) : "-");
                row.push_back(stragglerCell(a, i, r.rank));
            }
            t.rows.push_back(std::move(row));
        }
    }
    return t;
}

} // namespace hpcprof::report::detail

// SPDX-License-Identifier: MIT
// The words every diff format shares, so that text, markdown, HTML, JUnit and JSON say the same:
// a row's change ("+20.1%", "new", "gone"), its verdict and the noise floor that applied.
#include <fmt/format.h>

#include "writer_parts.hpp"

namespace hpcprof::report::detail {

using analyzer::AnalysisDiff;
using analyzer::DiffRow;
using analyzer::DiffVerdict;

std::string diffChangeText(const DiffRow& r) {
    if (const char* appearance = r.appearance(); *appearance) return appearance;
    return fmt::format("{:+.1f}%", r.deltaPct.value_or(0));
}

std::string diffValueText(const DiffRow& r, double v) {
    return r.time ? formatDuration(v) : fmt::format("{:.3f}", v);
}

bool diffRowListed(const DiffRow& r) {
    // Job-level rows always; the per-rank, kernel, collective and file rows (there may be
    // thousands) when they changed beyond the noise floor. The JSON diff lists every row.
    const bool jobLevel = r.scope == "summary" || r.scope == "class" || r.scope == "pop";
    return jobLevel || r.verdict != DiffVerdict::Same;
}

size_t diffRowsNotListed(const AnalysisDiff& d) {
    size_t n = 0;
    for (const auto& r : d.rows) n += diffRowListed(r) ? 0 : 1;
    return n;
}

std::string diffHeadline(const AnalysisDiff& d) {
    // The first row is the window length, or the mean step time in a per-step diff
    // (diffAnalyses); a diff without rows has nothing to say.
    const std::string change = d.rows.empty() ? std::string("unknown") : diffChangeText(d.rows.front());
    if (d.perStep)
        return fmt::format("step time {} (times per step: {} steps vs {}), {} regression(s), {} improvement(s)", change,
                           d.baseSteps, d.newSteps, d.regressions, d.improvements);
    return fmt::format("wall time {}, {} regression(s), {} improvement(s)", change, d.regressions, d.improvements);
}

std::string noiseFloorText(const AnalysisDiff& d) {
    const analyzer::DiffOptions& o = d.options;
    return fmt::format("noise floor: a time changes when it moves by more than {} (the larger of {} and {:g}% of the "
                       "base window) and by more than {:g}% of its base value; a POP efficiency when it moves by "
                       "more than {:g}",
                       formatDuration(double(d.noiseFloorNs)), formatDuration(double(o.minChangeNs)),
                       o.minChangeWindowPct, o.minChangePct, o.minEfficiencyChange);
}

} // namespace hpcprof::report::detail

// SPDX-License-Identifier: MIT
/// Comparison of two analyses (BASE and NEW): the job window, per class, per rank, per kernel,
/// collective and file, each row judged against a noise floor so that two runs of the same
/// program show no regression. Definitions and defaults: docs/reports.md, "Diff".
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

/// The noise floor. A time row changed only when its change is larger than the absolute floor,
/// max(minChangeNs, minChangeWindowPct % of BASE's job window), and larger than minChangePct %
/// of its BASE value (a row that starts or ends at zero needs only the absolute floor).
struct DiffOptions {
    int64_t minChangeNs = 5'000'000;  ///< absolute floor, ns
    double minChangeWindowPct = 1.0;  ///< absolute floor as a share of BASE's job window, %
    double minChangePct = 10.0;       ///< relative floor, % of the BASE value
    double minEfficiencyChange = 0.05; ///< POP metrics (0..1): floor of a change
};

/// How a row's value moved, beyond the noise floor or not.
enum class DiffVerdict { Same, Regression, Improvement };

struct DiffRow {
    std::string scope; ///< summary | class | pop | rank | kernel | collective | file
    std::string name;  ///< e.g. "comm", "rank 3 compute", a kernel name, a file's relative path
    double base = 0, next = 0;
    double delta = 0;                ///< next - base
    std::optional<double> deltaPct;  ///< 100 * delta / base; empty when either side is 0
    bool time = true;                ///< a time in ns (else a POP metric, 0..1)
    bool higherIsWorse = true;
    DiffVerdict verdict = DiffVerdict::Same;
    bool regression() const { return verdict == DiffVerdict::Regression; }
    /// "new" (from 0), "gone" (to 0), else "" (deltaPct says how much).
    const char* appearance() const { return base == 0 && next != 0 ? "new" : base != 0 && next == 0 ? "gone" : ""; }
};

struct AnalysisDiff {
    std::string basePath, newPath;
    std::vector<DiffRow> rows;
    int64_t regressions = 0, improvements = 0;
    double wallDeltaPct = 0;
    int64_t noiseFloorNs = 0; ///< the absolute floor that applied: max(minChangeNs, window share)
    DiffOptions options;
    /// Both runs have steps of the same named range family: every time row is per step (its value divided by the run's step
    /// count), the judged summary row is the mean step time and the window's length is shown
    /// only, so that a run with more steps is not a regression.
    bool perStep = false;
    int64_t baseSteps = 0, newSteps = 0;
};

AnalysisDiff diffAnalyses(const Analysis& base, const Analysis& next, const DiffOptions& options = {});

/// `path` relative to the longest of `dirs` it lies in ("out/a.dat"), else `path` unchanged.
std::string relativeToWorkingDir(const std::string& path, const std::vector<std::string>& dirs);

/// The verdict's word for reports: "regression", "improvement" or "" (within the noise floor).
const char* verdictName(DiffVerdict v);

} // namespace hpcprof::analyzer

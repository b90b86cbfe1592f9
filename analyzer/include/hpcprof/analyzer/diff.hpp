// SPDX-License-Identifier: MIT
/// Comparison of two analyses (BASE and NEW): per class, per rank, per top kernel, collective
/// and file, with regressions above a threshold flagged. Definitions: docs/analysis.md, "Diff".
#pragma once

#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

struct DiffOptions {
    double thresholdPct = 5.0;       ///< a row regresses when it grows by more than this ...
    int64_t minDeltaNs = 100'000;    ///< ... and by more than this many ns (noise floor)
    double efficiencyDrop = 0.02;    ///< POP metrics: regression when they fall by more than this
};

struct DiffRow {
    std::string scope; ///< summary | class | pop | rank | kernel | collective | file
    std::string name;  ///< e.g. "comm", "rank 3 compute", a kernel name
    double base = 0, next = 0;
    double delta = 0;     ///< next - base
    double deltaPct = 0;  ///< 100 * delta / base (0 when base is 0)
    bool higherIsWorse = true;
    bool regression = false;
};

struct AnalysisDiff {
    std::string basePath, newPath;
    std::vector<DiffRow> rows;
    int64_t regressions = 0;
    double wallDeltaPct = 0;
    DiffOptions options;
};

AnalysisDiff diffAnalyses(const Analysis& base, const Analysis& next, const DiffOptions& options = {});

} // namespace hpcprof::analyzer

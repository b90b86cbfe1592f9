// SPDX-License-Identifier: MIT
#include "hpcprof/analyzer/diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace hpcprof::analyzer {

namespace {

/// Beyond the noise floor? Time rows: larger than the absolute floor and, unless a side is 0,
/// than the relative floor. POP metrics: larger than their own floor.
bool beyondFloor(const DiffRow& r, const AnalysisDiff& d) {
    const double change = std::fabs(r.delta);
    if (!r.time) return change > d.options.minEfficiencyChange;
    if (change <= double(d.noiseFloorNs)) return false;
    return !r.deltaPct || std::fabs(*r.deltaPct) > d.options.minChangePct;
}

void addRow(AnalysisDiff& d, std::string scope, std::string name, double base, double next, bool higherIsWorse,
            bool isTime) {
    DiffRow r;
    r.scope = std::move(scope);
    r.name = std::move(name);
    r.base = base;
    r.next = next;
    r.delta = next - base;
    // A change from or to zero has no meaningful percentage: it is "new" or "gone".
    if (base != 0 && next != 0) r.deltaPct = 100.0 * r.delta / std::fabs(base);
    if (base == 0 && next == 0) r.deltaPct = 0.0;
    r.time = isTime;
    r.higherIsWorse = higherIsWorse;
    if (beyondFloor(r, d)) {
        const bool worse = higherIsWorse ? r.delta > 0 : r.delta < 0;
        r.verdict = worse ? DiffVerdict::Regression : DiffVerdict::Improvement;
        ++(worse ? d.regressions : d.improvements);
    }
    d.rows.push_back(std::move(r));
}

/// The last row is shown but never judged: MPI start-up and shutdown vary from run to run with
/// the launcher and the machine's load, not with the program.
void informOnly(AnalysisDiff& d) {
    DiffRow& r = d.rows.back();
    if (r.verdict == DiffVerdict::Regression) --d.regressions;
    if (r.verdict == DiffVerdict::Improvement) --d.improvements;
    r.verdict = DiffVerdict::Same;
}

/// What a time of run `side` (0 = BASE, 1 = NEW) is divided by: its step count in a per-step
/// diff, else 1.
double per(const AnalysisDiff& d, int side) {
    if (!d.perStep) return 1.0;
    return double(side == 0 ? d.baseSteps : d.newSteps);
}

/// A time row: both values scaled to the diff's unit (the run, or one step).
void addTimeRow(AnalysisDiff& d, std::string scope, std::string name, double base, double next) {
    addRow(d, std::move(scope), std::move(name), base / per(d, 0), next / per(d, 1), true, true);
}

/// Top items matched by key (`key` maps a name to what is compared across the two runs).
template <typename Key>
void diffTop(AnalysisDiff& d, const char* scope, const std::vector<TopItem>& base, const std::vector<TopItem>& next,
             const Key& keyOf) {
    std::map<std::string, std::pair<double, double>> m;
    for (const auto& t : base) m[keyOf(t.name, 0)].first += double(t.totalNs);
    for (const auto& t : next) m[keyOf(t.name, 1)].second += double(t.totalNs);
    for (const auto& [name, v] : m) addTimeRow(d, scope, name, v.first, v.second);
}

/// The communication calls that are not collectives (those have their own rows): the sends,
/// receives, waits and probes whose time changed.
std::vector<TopItem> pointToPointCalls(const Analysis& a) {
    std::set<std::string> collectives;
    for (const auto& t : a.topCollectives) collectives.insert(t.name);
    std::vector<TopItem> calls;
    for (const auto& t : a.topCommunication)
        if (!collectives.count(t.name)) calls.push_back(t);
    return calls;
}

std::vector<std::string> workingDirs(const Analysis& a) {
    std::set<std::string> dirs;
    for (const auto& r : a.ranks)
        if (!r.cwd.empty()) dirs.insert(r.cwd);
    return {dirs.begin(), dirs.end()};
}

void diffRanks(AnalysisDiff& d, const Analysis& base, const Analysis& next) {
    std::map<int64_t, std::pair<const RankBreakdown*, const RankBreakdown*>> ranks;
    for (const auto& r : base.ranks) ranks[r.rank].first = &r;
    for (const auto& r : next.ranks) ranks[r.rank].second = &r;
    for (const auto& [rank, p] : ranks)
        for (int c = 0; c < kTimeClassCount; ++c) {
            double b = p.first ? double(p.first->exclusive[c]) : 0, n = p.second ? double(p.second->exclusive[c]) : 0;
            if (b == 0 && n == 0) continue;
            addTimeRow(d, "rank", "rank " + std::to_string(rank) + " " + timeClassName(TimeClass(c)), b, n);
            if (c == int(TimeClass::Setup)) informOnly(d);
        }
}

/// The processes that are not ranks, by what they are rather than by pid (which differs from run to
/// run): "worker fork_workers #2" is the second worker running fork_workers, in start order.
std::map<std::string, const RankBreakdown*> processesByRole(const Analysis& a) {
    std::map<std::string, const RankBreakdown*> out;
    std::map<std::string, int> seen;
    for (const auto& p : a.processes) {
        if (!p.breakdown) continue; // ranks and main processes are diffed as ranks; launchers not analysed
        const size_t slash = p.command.find_last_of('/');
        std::string program = p.command.substr(slash == std::string::npos ? 0 : slash + 1);
        program = program.substr(0, program.find(' '));
        std::string key = std::string(processRoleName(p.role)) + " " + program;
        out[key + " #" + std::to_string(++seen[key])] = &*p.breakdown;
    }
    return out;
}

void diffProcesses(AnalysisDiff& d, const Analysis& base, const Analysis& next) {
    const auto b = processesByRole(base), n = processesByRole(next);
    std::map<std::string, std::pair<const RankBreakdown*, const RankBreakdown*>> both;
    for (const auto& [key, r] : b) both[key].first = r;
    for (const auto& [key, r] : n) both[key].second = r;
    for (const auto& [key, p] : both)
        for (int c = 0; c < kTimeClassCount; ++c) {
            double x = p.first ? double(p.first->exclusive[c]) : 0, y = p.second ? double(p.second->exclusive[c]) : 0;
            if (x == 0 && y == 0) continue;
            addTimeRow(d, "process", key + " " + timeClassName(TimeClass(c)), x, y);
            if (c == int(TimeClass::Setup)) informOnly(d);
        }
}

} // namespace

std::string relativeToWorkingDir(const std::string& path, const std::vector<std::string>& dirs) {
    const std::string* best = nullptr;
    for (const auto& dir : dirs) {
        if (dir.empty() || path.size() <= dir.size() || path.compare(0, dir.size(), dir) != 0) continue;
        // "/run/a" holds "/run/a/x" but not "/run/ab/x"; the root "/" holds every absolute path.
        if (dir.back() != '/' && path[dir.size()] != '/') continue;
        if (!best || dir.size() > best->size()) best = &dir;
    }
    if (!best) return path;
    return path.substr(best->size() + (best->back() == '/' ? 0 : 1));
}

const char* verdictName(DiffVerdict v) {
    switch (v) {
    case DiffVerdict::Regression: return "regression";
    case DiffVerdict::Improvement: return "improvement";
    case DiffVerdict::Same: break;
    }
    return "";
}

/// Per-step rows only for steps both runs mark the same way (a range family such as
/// ProfilerStep#N): steps guessed from a pattern of collectives may be cut differently in two
/// runs, which would move every per-step value.
bool stepsComparable(const StepStats& base, const StepStats& next) {
    return !base.steps.empty() && !next.steps.empty() && base.source == next.source &&
           base.source.rfind("collectives:", 0) != 0;
}

/// The summary rows: the mean step time when both runs have steps (the window's length then
/// shown only), else the window's length; then the classes.
void diffSummary(AnalysisDiff& d, const Analysis& base, const Analysis& next) {
    if (d.perStep) {
        addRow(d, "summary", "step_ns", double(base.steps.meanNs), double(next.steps.meanNs), true, true);
        d.wallDeltaPct = d.rows.back().deltaPct.value_or(0);
        addRow(d, "summary", "wall_ns", double(base.summary.wallNs), double(next.summary.wallNs), true, true);
        informOnly(d);
        addRow(d, "summary", "steps", double(d.baseSteps), double(d.newSteps), true, false);
        informOnly(d);
    } else {
        addRow(d, "summary", "wall_ns", double(base.summary.wallNs), double(next.summary.wallNs), true, true);
        d.wallDeltaPct = d.rows.back().deltaPct.value_or(0);
    }
    for (int c = 0; c < kTimeClassCount; ++c) {
        addTimeRow(d, "class", timeClassName(TimeClass(c)), double(base.summary.exclusive[c]),
                   double(next.summary.exclusive[c]));
        if (c == int(TimeClass::Setup)) informOnly(d);
    }
}

AnalysisDiff diffAnalyses(const Analysis& base, const Analysis& next, const DiffOptions& options) {
    AnalysisDiff d;
    d.options = options;
    d.basePath = base.tracePath;
    d.newPath = next.tracePath;
    d.baseSteps = int64_t(base.steps.steps.size());
    d.newSteps = int64_t(next.steps.steps.size());
    d.perStep = stepsComparable(base.steps, next.steps);
    // The absolute floor's window share is of what a row measures: the run, or one step.
    const double unit = d.perStep ? double(base.steps.meanNs) : double(base.summary.wallNs);
    d.noiseFloorNs = std::max(options.minChangeNs, int64_t(std::llround(unit * options.minChangeWindowPct / 100.0)));
    diffSummary(d, base, next);
    addRow(d, "pop", "load_balance", base.pop.loadBalance, next.pop.loadBalance, false, false);
    addRow(d, "pop", "communication_efficiency", base.pop.communicationEfficiency,
           next.pop.communicationEfficiency, false, false);
    addRow(d, "pop", "parallel_efficiency", base.pop.parallelEfficiency, next.pop.parallelEfficiency, false, false);
    diffRanks(d, base, next);
    diffProcesses(d, base, next);
    auto byName = [](const std::string& name, int) { return name; };
    // Every kernel (traces analysed before the full list existed have the top list only).
    diffTop(d, "kernel", base.kernels.empty() ? base.topKernels : base.kernels,
            next.kernels.empty() ? next.topKernels : next.kernels, byName);
    diffTop(d, "collective", base.topCollectives, next.topCollectives, byName);
    diffTop(d, "call", pointToPointCalls(base), pointToPointCalls(next), byName);
    // Files by their path relative to the run's working directory, so that the same program run
    // in two folders compares its own files with each other.
    const std::vector<std::string> dirs[2] = {workingDirs(base), workingDirs(next)};
    diffTop(d, "file", base.topFiles, next.topFiles,
            [&](const std::string& name, int side) { return relativeToWorkingDir(name, dirs[side]); });
    return d;
}

} // namespace hpcprof::analyzer

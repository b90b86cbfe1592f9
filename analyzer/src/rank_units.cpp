// SPDX-License-Identifier: MIT
#include "rank_units.hpp"

#include <algorithm>
#include <unordered_set>

#include "hpcprof/analyzer/event_query.hpp"
#include "trace_access.hpp"

namespace hpcprof::analyzer::detail {

namespace {

bool globMatch(const std::string& pattern, const std::string& name) {
    if (!pattern.empty() && pattern.back() == '*')
        return name.compare(0, pattern.size() - 1, pattern, 0, pattern.size() - 1) == 0;
    return name == pattern;
}

/// Process times out of range (damage) are left out of the run like event times are.
int64_t clampTime(int64_t ns) { return std::clamp(ns, -kTimeLimitNs + 1, kTimeLimitNs - 1); }

/// Adds process `p`'s tracks to `u`, picks its reference track, widens [b, e] to its events.
Status addProcess(const Trace& trace, const TraceIndex& ix, const ProcessInfo& p, RankUnit& u,
                  int64_t& b, int64_t& e) {
    const TrackInfo* busiest = nullptr;
    bool mainFound = false;
    for (const TrackInfo* t : ix.tracksOf(p.id)) {
        u.tracks.push_back(t);
        auto bounds = trackTimeBounds(trace, *t);
        if (!bounds) return bounds.status();
        if (*bounds) {
            b = std::min(b, (*bounds)->begin);
            e = std::max(e, (*bounds)->end);
            u.trackBounds[t->id] = {(*bounds)->begin, (*bounds)->end};
        }
        if (t->kind == TrackKind::GpuStream) u.gpu = true;
        if (t->kind != TrackKind::CpuThread) continue;
        if (t->tid && *t->tid == p.pid) {
            u.referenceTracks.insert(t->id);
            mainFound = true;
        }
        if (!busiest || t->eventCount > busiest->eventCount) busiest = t;
    }
    if (!mainFound && busiest) u.referenceTracks.insert(busiest->id);
    return {};
}

/// The ranges of a name pattern (annotation events: user and NVTX ranges), per rank: one scan
/// of the event table, names matched in the string table first.
Result<IntervalSet> rangeWindows(const Trace& trace, const WindowSpec& spec, RankUnits& ranks) {
    std::unordered_set<int64_t> nameIds;
    schema::Statement names(detail::db(trace), "SELECT id, value FROM string");
    while (names.step())
        if (globMatch(spec.pattern, names.text(1))) nameIds.insert(names.int64(0));
    HPCPROF_RETURN_IF_ERROR(names.error());
    std::map<int64_t, int64_t> processToRank;
    for (auto& [r, u] : ranks.units)
        for (auto* p : u.processes) processToRank[p->id] = r;
    IntervalSet all;
    if (!nameIds.empty()) {
        schema::Statement s(detail::db(trace),
                            "SELECT e.ts, e.dur, t.process_id, e.name_id FROM event e"
                            " JOIN track t ON t.id = e.track_id JOIN category c ON c.id = e.category_id"
                            " WHERE c.class = 'annotation'");
        while (s.step()) {
            if (!nameIds.count(s.int64(3))) continue;
            int64_t b = s.int64(0), e = b + std::max<int64_t>(0, s.int64(1));
            all.add(b, e);
            if (auto it = processToRank.find(s.int64(2)); it != processToRank.end())
                ranks.units[it->second].window.add(b, e);
        }
        HPCPROF_RETURN_IF_ERROR(s.error());
    }
    all.normalize();
    if (all.empty())
        return Status::error("window " + spec.text + ": no user or NVTX range named '" + spec.pattern +
                             "' in the trace");
    for (auto& [r, u] : ranks.units) {
        u.window.normalize();
        if (u.window.empty()) u.window = all; // ranks without their own ranges use everyone's
    }
    return all;
}

/// Unit numbers for a trace without ranks: one per main process, its images before
/// and after exec() together (same host and pid, the earlier one ended by exec), numbered in
/// process-table order.
std::vector<int64_t> processOrdinals(const std::vector<ProcessInfo>& processes, const ProcessRoles& roles) {
    std::map<std::pair<std::string, int64_t>, size_t> lastImage; // (host, pid) -> its latest row
    std::vector<int64_t> ordinal(processes.size());
    int64_t next = 0;
    for (size_t i = 0; i < processes.size(); ++i) {
        const ProcessInfo& p = processes[i];
        if (roles.role[i] != ProcessRole::Main) continue;
        auto it = lastImage.find({p.host, p.pid});
        const bool continues = it != lastImage.end() && processes[it->second].execed;
        ordinal[i] = continues ? ordinal[it->second] : next++;
        lastImage[{p.host, p.pid}] = i;
    }
    return ordinal;
}

/// Tracks and active span of each unit; widens the job to the ranks' (not the others').
Status fillUnit(const Trace& trace, const TraceIndex& ix, RankUnit& u, RankUnits* job) {
    u.imported = !u.processes.empty();
    for (const ProcessInfo* p : u.processes) {
        u.imported = u.imported && p->imported;
        int64_t b = clampTime(p->startTs), e = clampTime(p->endTs.value_or(p->startTs));
        HPCPROF_RETURN_IF_ERROR(addProcess(trace, ix, *p, u, b, e));
        u.active.add(b, e);
        if (job) {
            job->jobBegin = std::min(job->jobBegin, b);
            job->jobEnd = std::max(job->jobEnd, e);
        }
    }
    u.active.normalize();
    if (!u.active.empty()) u.activity = {u.active.items().front().begin, u.active.items().back().end};
    return {};
}


/// The steps are the default window when they are the program's iterations for sure: Kineto's
/// ProfilerStep or --steps, or any range family of an imported profiler trace (whose recorded
/// span is the profiler's). A run hpcprof captured keeps its whole run: its start-up is the
/// program's own time, and POP already measures between MPI_Init and MPI_Finalize.
bool stepsAreWindow(const StepStats& steps, const RankUnits& ranks) {
    if (steps.steps.empty() || steps.ranks.empty()) return false;
    if (steps.basis == "profiler_step" || steps.basis == "option") return true;
    return steps.basis == "tiling" &&
           std::all_of(ranks.units.begin(), ranks.units.end(), [](const auto& ru) { return ru.second.imported; });
}

/// The default window, job-wide (one window for every rank: a rank that starts its first step
/// late shows that as idle instead of hiding it): from the first step's begin to the last
/// step's end over the ranks, else from the first to the last activity of the ranks.
IntervalSet defaultWindow(const StepStats& steps, const RankUnits& ranks, WindowChoice& choice) {
    int64_t b = INT64_MAX, e = INT64_MIN;
    if (stepsAreWindow(steps, ranks)) {
        for (const RankSteps& r : steps.ranks) {
            if (r.steps.empty()) continue;
            b = std::min(b, r.steps.front().begin);
            e = std::max(e, r.steps.back().end);
        }
        choice.basis = "steps";
        choice.firstStep = 0;
        choice.lastStep = int64_t(steps.steps.size()) - 1;
        choice.reason = "steps " + std::to_string(choice.firstStep) + "-" + std::to_string(choice.lastStep) +
                        " of " + steps.reason;
    } else {
        for (const auto& [r, u] : ranks.units) {
            if (u.activity.end <= u.activity.begin) continue;
            b = std::min(b, u.activity.begin);
            e = std::max(e, u.activity.end);
        }
        const bool whole = b <= ranks.jobBegin && e >= ranks.jobEnd;
        choice.basis = whole ? "whole" : "activity";
        choice.reason = whole ? "the whole run" : "first to last activity of the ranks' threads and devices";
    }
    b = std::max(b, ranks.jobBegin);
    e = std::min(e, ranks.jobEnd);
    return e > b ? IntervalSet::single(b, e) : IntervalSet::single(ranks.jobBegin, ranks.jobEnd);
}

} // namespace

Result<RankUnits> rankUnits(const Trace& trace, const TraceIndex& ix) {
    RankUnits out;
    const auto& processes = ix.processes();
    out.roles = processRoles(processes);
    if (std::none_of(out.roles.role.begin(), out.roles.role.end(),
                     [](ProcessRole r) { return r == ProcessRole::Rank || r == ProcessRole::Main; }))
        out.roles = processRoles(processes, true);
    const bool anyRank = out.roles.anyRank;
    const std::vector<int64_t> ordinals = anyRank ? std::vector<int64_t>() : processOrdinals(processes, out.roles);
    out.unitOf.assign(processes.size(), std::nullopt);
    for (size_t i = 0; i < processes.size(); ++i) {
        const ProcessInfo& p = processes[i];
        const ProcessRole role = out.roles.role[i];
        if (role != ProcessRole::Rank && role != ProcessRole::Main) continue;
        const int64_t r = anyRank ? *p.rank : ordinals[i];
        out.unitOf[i] = r;
        out.units[r].rank = r;
        out.units[r].processes.push_back(&p);
    }
    if (out.units.empty()) return Status::error(trace.path() + ": the trace has no processes to analyse");
    for (size_t i = 0; i < processes.size(); ++i) {
        const ProcessRole role = out.roles.role[i];
        if (role != ProcessRole::Worker && role != ProcessRole::Other) continue;
        if (auto o = out.roles.owner[i]) out.unitOf[i] = out.unitOf[*o];
        RankUnit& u = out.others[i];
        u.rank = out.unitOf[i].value_or(-1);
        u.processes.push_back(&processes[i]);
    }
    for (auto& [r, u] : out.units) HPCPROF_RETURN_IF_ERROR(fillUnit(trace, ix, u, &out));
    for (auto& [i, u] : out.others) HPCPROF_RETURN_IF_ERROR(fillUnit(trace, ix, u, nullptr));
    return out;
}

Result<IntervalSet> chooseWindows(const Trace& trace, const TraceIndex&, const WindowSpec& spec,
                                  const StepStats& steps, RankUnits& ranks, WindowChoice& choice) {
    IntervalSet job;
    choice.recordedBegin = ranks.jobBegin;
    choice.recordedEnd = ranks.jobEnd;
    switch (spec.kind) {
    case WindowSpec::Kind::Default: job = defaultWindow(steps, ranks, choice); break;
    case WindowSpec::Kind::Whole:
        job = IntervalSet::single(ranks.jobBegin, ranks.jobEnd);
        choice.basis = "whole";
        choice.reason = "--window all: the whole recorded span";
        break;
    case WindowSpec::Kind::TimeRange:
        job = IntervalSet::single(std::max(ranks.jobBegin, spec.begin), std::min(ranks.jobEnd, spec.end));
        if (job.empty())
            return Status::error("window " + spec.text + " does not overlap the trace (" +
                                 std::to_string(ranks.jobBegin) + ".." + std::to_string(ranks.jobEnd) + " ns)");
        choice.basis = "time";
        choice.reason = "--window " + spec.text;
        break;
    case WindowSpec::Kind::RangeName: {
        auto all = rangeWindows(trace, spec, ranks);
        if (!all) return all.status();
        choice.basis = "range";
        choice.reason = "--window " + spec.text;
        return std::move(all.value());
    }
    }
    for (auto& [r, u] : ranks.units) u.window = job;
    return job;
}

int64_t endWindowsWhereRecordingStopped(std::map<int64_t, RankUnit>& units) {
    int64_t cut = 0;
    for (auto& [r, u] : units) {
        const TrackInfo* first = nullptr;
        for (const TrackInfo* t : u.tracks) {
            if (!t->recordingStoppedTs || (!u.gpu && u.referenceTracks.count(t->id) == 0)) continue;
            if (!first || *t->recordingStoppedTs < *first->recordingStoppedTs) first = t;
        }
        const int64_t stop = first ? *first->recordingStoppedTs : 0;
        if (!first || u.window.empty() || stop >= u.window.items().back().end) continue;
        u.recordingStoppedTs = stop;
        u.stopReason = first->stopReason;
        const int64_t begin = std::min(stop, u.window.items().front().begin);
        u.window = u.window.intersect(IntervalSet::single(begin, stop));
        ++cut;
    }
    return cut;
}

} // namespace hpcprof::analyzer::detail

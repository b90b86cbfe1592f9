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
    for (const ProcessInfo* p : u.processes) {
        int64_t b = clampTime(p->startTs), e = clampTime(p->endTs.value_or(p->startTs));
        HPCPROF_RETURN_IF_ERROR(addProcess(trace, ix, *p, u, b, e));
        u.active.add(b, e);
        if (job) {
            job->jobBegin = std::min(job->jobBegin, b);
            job->jobEnd = std::max(job->jobEnd, e);
        }
    }
    u.active.normalize();
    return {};
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
                                  RankUnits& ranks) {
    IntervalSet job;
    switch (spec.kind) {
    case WindowSpec::Kind::Whole: job = IntervalSet::single(ranks.jobBegin, ranks.jobEnd); break;
    case WindowSpec::Kind::TimeRange:
        job = IntervalSet::single(std::max(ranks.jobBegin, spec.begin), std::min(ranks.jobEnd, spec.end));
        if (job.empty())
            return Status::error("window " + spec.text + " does not overlap the trace (" +
                                 std::to_string(ranks.jobBegin) + ".." + std::to_string(ranks.jobEnd) + " ns)");
        break;
    case WindowSpec::Kind::RangeName: {
        auto all = rangeWindows(trace, spec, ranks);
        if (!all) return all.status();
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

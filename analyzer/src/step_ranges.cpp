// SPDX-License-Identifier: MIT
#include "step_ranges.hpp"

#include <algorithm>
#include <cmath>

#include "event_page_reader.hpp"
#include "rank_pass.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/event_categories.hpp"
#include "steps.hpp"
#include "trace_access.hpp"

namespace hpcprof::analyzer::detail {

namespace {

/// Kineto's profiler steps: torch.profiler's schedule marks each step with this range.
constexpr const char* kProfilerStepFamily = "ProfilerStep#";
/// A range family is the steps only when it covers at least this share of every rank's
/// activity: ranges that fill half a run or less are phases of a step (forward, optimizer).
constexpr double kMinTiling = 0.5;

/// The outermost ranges of one family on one track: a range at a smaller depth than those seen
/// so far restarts the list (events arrive by start, so an outer range comes first).
struct TrackFamily {
    int64_t depth = INT64_MAX;
    std::vector<Interval> ranges;
    void add(int64_t depth_, Interval iv) {
        if (depth_ < depth) {
            depth = depth_;
            ranges.clear();
        }
        if (depth_ == depth) ranges.push_back(iv);
    }
};

using PerTrack = std::map<std::string, std::map<int64_t, TrackFamily>>; // family -> track -> ranges

/// The user and NVTX ranges of one track, with `pages` (may be null) below SQL as far as it gets.
Status scanTrackRanges(const Trace& trace, const TraceIndex& ix, const TrackInfo& t, const EventPageReader* pages,
                       PerTrack& out, int64_t& count) {
    const int64_t userRange = int64_t(schema::Category::UserRange), nvtx = int64_t(schema::Category::Nvtx);
    auto add = [&](int64_t ts, int64_t dur, int64_t depth, int64_t nameId) {
        ++count;
        out[stepFamilyName(ix.string(nameId))][t.id].add(depth, {ts, ts + std::max<int64_t>(0, dur)});
    };
    const bool byId = t.firstEventId && t.lastEventId;
    EventRecord e;
    EventPageReader::Categories ranges;
    ranges.set(size_t(userRange)).set(size_t(nvtx));
    const auto from = EventPageReader::readAsFarAsItGets(pages, t, e, [&](const EventRecord& r) {
        add(r.ts, r.dur, r.depth, r.nameId);
    }, &ranges);
    if (!from) return from.status();
    if (byId && *from > *t.lastEventId) return {};
    schema::Statement s(detail::db(trace),
                        byId ? "SELECT ts, dur, depth, name_id FROM event WHERE id BETWEEN ?1 AND ?2"
                               " AND track_id = ?5 AND category_id IN (?3, ?4) ORDER BY id"
                             : "SELECT ts, dur, depth, name_id FROM event WHERE track_id = ?5"
                               " AND category_id IN (?3, ?4) ORDER BY ts");
    if (byId) {
        s.bind(1, *from);
        s.bind(2, *t.lastEventId);
    }
    s.bind(3, userRange);
    s.bind(4, nvtx);
    s.bind(5, t.id);
    while (s.step()) add(s.int64(0), s.int64(1), s.int64(2), s.int64(3));
    return s.error();
}

/// Of each family, the track with the most outermost ranges (the lower id on a tie).
std::vector<Interval> busiestTrack(std::map<int64_t, TrackFamily>& byTrack) {
    TrackFamily* best = nullptr;
    for (auto& [id, f] : byTrack)
        if (!best || f.ranges.size() > best->ranges.size()) best = &f;
    auto v = best ? std::move(best->ranges) : std::vector<Interval>();
    std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
    return v;
}

/// The share of `activity` the ranges cover (they do not overlap: one depth of one thread).
double tilingOf(const std::vector<Interval>& ranges, Interval activity) {
    const int64_t len = activity.end - activity.begin;
    if (len <= 0) return 0;
    int64_t covered = 0;
    for (const Interval& r : ranges)
        covered += std::max<int64_t>(0, std::min(r.end, activity.end) - std::max(r.begin, activity.begin));
    return double(covered) / double(len);
}

/// The smallest tiling over the ranks, 0 when a rank has fewer than 2 ranges of the family.
double familyTiling(const std::map<int64_t, std::vector<Interval>>& byRank, const RankUnits& ranks) {
    double least = 1;
    for (const auto& [r, u] : ranks.units) {
        auto it = byRank.find(r);
        if (it == byRank.end() || it->second.size() < 2) return 0;
        least = std::min(least, tilingOf(it->second, u.activity));
    }
    return least;
}

size_t instances(const std::map<int64_t, std::vector<Interval>>& byRank) {
    size_t n = 0;
    for (const auto& [r, v] : byRank) n += v.size();
    return n;
}

int64_t firstBegin(const std::map<int64_t, std::vector<Interval>>& byRank) {
    int64_t b = INT64_MAX;
    for (const auto& [r, v] : byRank)
        if (!v.empty()) b = std::min(b, v.front().begin);
    return b;
}

/// The family of the largest tiling (more ranges, then the earlier start, break ties).
const std::string* bestTiling(const RangeFamilies& ranges, const RankUnits& units,
                              const std::vector<const std::string*>& names, double& tiling) {
    const std::string* best = nullptr;
    tiling = 0;
    for (const std::string* n : names) {
        const auto& byRank = ranges.families.at(*n);
        const double t = familyTiling(byRank, units);
        if (t <= 0) continue;
        const bool better = !best || t > tiling ||
                            (t == tiling && (instances(byRank) > instances(ranges.families.at(*best)) ||
                                             (instances(byRank) == instances(ranges.families.at(*best)) &&
                                              firstBegin(byRank) < firstBegin(ranges.families.at(*best)))));
        if (better) {
            best = n;
            tiling = t;
        }
    }
    return best;
}

std::string percent(double share) { return std::to_string(int(std::lround(share * 100))) + "%"; }

/// The family --steps names; an error naming the families there are when none matches.
Result<const std::string*> optionFamily(const RangeFamilies& ranges, const RankUnits& units,
                                        const std::string& option) {
    std::vector<const std::string*> matches;
    std::string known;
    for (const auto& [name, byRank] : ranges.families) {
        if (stepOptionMatches(option, name)) matches.push_back(&name);
        if (known.size() < 200) known += (known.empty() ? "" : ", ") + ("'" + name + "'");
    }
    if (matches.empty())
        return Status::error("--steps " + option + ": no user or NVTX range family of that name" +
                             (known.empty() ? std::string(" (the trace has none)") : "; families: " + known));
    double tiling = 0;
    const std::string* best = bestTiling(ranges, units, matches, tiling);
    if (best) return best;
    // None covers every rank twice: the one with the most ranges.
    return *std::max_element(matches.begin(), matches.end(), [&](auto* a, auto* b) {
        return instances(ranges.families.at(*a)) < instances(ranges.families.at(*b));
    });
}

/// "ProfilerStep#" -> "ProfilerStep": how people name the family.
std::string displayName(const std::string& family) {
    return !family.empty() && family.back() == '#' ? family.substr(0, family.size() - 1) : family;
}

/// The end of a track's last activity: the track's last event by start may be nested in an
/// outer one that ends later (a step range around its last op), so read back from the last
/// event to the last outermost one (depth 0): every event after it is nested in it.
Result<int64_t> trackEnd(const Trace& trace, const TrackInfo& t, int64_t lastEnd) {
    if (!t.firstEventId || !t.lastEventId) return lastEnd;
    schema::Statement s(detail::db(trace), "SELECT ts + MAX(dur, 0), depth FROM event"
                                           " WHERE id BETWEEN ?1 AND ?2 ORDER BY id DESC");
    s.bind(1, *t.firstEventId);
    s.bind(2, *t.lastEventId);
    int64_t end = lastEnd;
    while (s.step()) {
        if (timeInRange(s.int64(0))) end = std::max(end, s.int64(0));
        if (s.int64(1) == 0) break;
    }
    HPCPROF_RETURN_IF_ERROR(s.error());
    return end;
}

} // namespace

bool stepOptionMatches(const std::string& option, const std::string& family) {
    if (option.empty()) return false;
    if (option.back() == '*') return family.compare(0, option.size() - 1, option, 0, option.size() - 1) == 0;
    return option == family || option == displayName(family) || stepFamilyName(option) == family;
}

Result<RangeFamilies> scanRangeFamilies(const Trace& trace, const TraceIndex& ix, const RankUnits& ranks, int threads) {
    // Ranks on the pass's workers (one full read of the CPU threads' events: serial, it was a
    // fifth of a report's time), each rank's result kept apart and joined in rank order.
    struct RankRanges {
        std::map<std::string, std::vector<Interval>> families;
        std::vector<int64_t> rangeOnlyTracks;
        Status status;
    };
    std::vector<const RankUnit*> units;
    for (const auto& [r, u] : ranks.units) units.push_back(&u);
    std::vector<RankRanges> perRank(units.size());
    onWorkers(trace, units.size(), threads, [&](const Trace& conn, std::atomic<size_t>& next) {
        const auto pages = EventPageReader::open(conn);
        PerTrack perTrack;
        for (size_t i = next.fetch_add(1); i < units.size(); i = next.fetch_add(1)) {
            RankRanges& out = perRank[i];
            for (const TrackInfo* t : units[i]->tracks) {
                if (t->kind != TrackKind::CpuThread) continue; // GPU copies of a range are no steps
                int64_t count = 0;
                out.status = scanTrackRanges(conn, ix, *t, pages.get(), perTrack, count);
                if (!out.status.ok()) break;
                if (count > 0 && count == t->eventCount) out.rangeOnlyTracks.push_back(t->id);
            }
            for (auto& [family, byTrack] : perTrack) {
                auto v = busiestTrack(byTrack);
                if (!v.empty()) out.families[family] = std::move(v);
            }
            perTrack.clear();
        }
    });
    RangeFamilies out;
    size_t i = 0;
    for (const auto& [r, u] : ranks.units) {
        RankRanges& rr = perRank[i++];
        HPCPROF_RETURN_IF_ERROR(rr.status);
        for (auto& [family, v] : rr.families) out.families[family][r] = std::move(v);
        out.rangeOnlyTracks.insert(rr.rangeOnlyTracks.begin(), rr.rangeOnlyTracks.end());
    }
    return out;
}

bool metadataRulesOutRanges(const Trace& trace) {
    schema::Statement row(detail::db(trace), "SELECT value FROM metadata WHERE key = ?");
    row.bind(1, schema::kEventCategoriesKey);
    if (!row.step()) return false; // a trace of an older build, or of another writer
    const auto present = schema::parseEventCategories(row.text(0));
    if (!present) return false;
    for (size_t id = 0; id < present->size(); ++id)
        if (present->test(id) && isStepRangeCategory(int64_t(id))) return false;
    return true;
}

Status setActivity(const Trace& trace, RankUnits& ranks, const RangeFamilies& ranges) {
    for (auto& [r, u] : ranks.units) {
        if (!u.imported) continue; // a captured process is active all its life
        Interval hull{INT64_MAX, INT64_MIN};
        for (const TrackInfo* t : u.tracks) {
            auto b = u.trackBounds.find(t->id);
            if (b == u.trackBounds.end() || ranges.rangeOnlyTracks.count(t->id)) continue;
            auto end = trackEnd(trace, *t, b->second.end);
            if (!end) return end.status();
            hull.begin = std::min(hull.begin, b->second.begin);
            hull.end = std::max(hull.end, *end);
        }
        if (hull.begin < hull.end) u.activity = hull;
    }
    return {};
}

Result<StepStats> chooseRangeSteps(const RangeFamilies& ranges, const RankUnits& ranks, const std::string& option) {
    if (option == "collectives") return StepStats{};
    const std::string* family = nullptr;
    std::string basis, reason;
    double tiling = 0;
    if (!option.empty()) {
        auto f = optionFamily(ranges, ranks, option);
        if (!f) return f.status();
        family = *f;
        tiling = familyTiling(ranges.families.at(*family), ranks);
        basis = "option";
        reason = "--steps " + option + ": range " + displayName(*family);
    } else if (auto it = ranges.families.find(kProfilerStepFamily); it != ranges.families.end()) {
        family = &it->first;
        tiling = familyTiling(it->second, ranks);
        basis = "profiler_step";
        reason = "ProfilerStep (profiler steps)";
    } else {
        std::vector<const std::string*> names;
        for (const auto& [name, byRank] : ranges.families) names.push_back(&name);
        family = bestTiling(ranges, ranks, names, tiling);
        if (!family || tiling < kMinTiling) return StepStats{};
        basis = "tiling";
        reason = "range " + displayName(*family) + " (tiles " + percent(tiling) + " of active time)";
    }
    StepStats s = stepsFromRanges(ranges.families.at(*family), *family);
    s.basis = basis;
    s.reason = reason;
    s.tiling = tiling;
    return s;
}

} // namespace hpcprof::analyzer::detail

// SPDX-License-Identifier: MIT
// The hang family's analysis facet: after the rank pass, reads the unfinished calls
// (event_unfinished, traces from raw format 6 on) and each rank's last completed call, and
// makes the hang diagnosis of them (hang_diagnosis.cpp). Traces without the table, or without
// an unfinished call, get no section.
#include <map>

#include "family_analysis.hpp"
#include "hang_section.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/tables.hpp"
#include "trace_access.hpp"

namespace hpcprof::analyzer {

namespace advice {
std::vector<RuleSpec> hangRules();
}

namespace {

std::optional<int64_t> optional(const schema::Statement& st, int col) {
    if (st.isNull(col)) return std::nullopt;
    return st.int64(col);
}

/// Every rank, with its process's end state (its first process: a forked child shares the rank).
Status readRanks(sqlite3* db, HangSection& s) {
    schema::Statement st(db, "SELECT rank, end_state FROM process WHERE rank IS NOT NULL"
                             " GROUP BY rank HAVING id = MIN(id) ORDER BY rank");
    if (!st.valid()) return st.error();
    while (st.step()) s.ranks.push_back(HangRank{st.int64(0), {}, {}, 0, st.text(1)});
    return st.error();
}

/// Each rank's last completed call: the latest end among its CPU tracks' last events (or the one
/// before, when the last is unfinished). Primary-key lookups only.
Status readLastCalls(sqlite3* db, std::map<int64_t, HangRank*>& byRank) {
    schema::Statement st(
        db, "SELECT p.rank, s.value, e.ts + e.dur FROM track t"
            " JOIN process p ON p.id = t.process_id"
            " JOIN event e ON e.id = CASE WHEN t.last_event_id IN (SELECT event_id FROM event_unfinished)"
            "                        THEN t.last_event_id - 1 ELSE t.last_event_id END"
            " JOIN string s ON s.id = e.name_id"
            " WHERE p.rank IS NOT NULL AND t.kind = 'cpu_thread' AND e.id >= t.first_event_id");
    if (!st.valid()) return st.error();
    while (st.step()) {
        auto it = byRank.find(st.int64(0));
        if (it == byRank.end() || st.int64(2) < it->second->lastCallEndNs) continue;
        it->second->lastCall = st.text(1);
        it->second->lastCallEndNs = st.int64(2);
    }
    return st.error();
}

HangCall callOf(const schema::Statement& st) {
    HangCall c;
    c.eventId = st.int64(0);
    c.rank = st.int64(1);
    c.tid = st.isNull(2) ? 0 : st.int64(2);
    c.name = st.text(3);
    c.cls = st.text(4);
    c.communicator = st.isNull(5) ? "" : st.text(5);
    c.commSize = st.isNull(6) ? -1 : st.int64(6);
    c.instance = optional(st, 7);
    c.peer = optional(st, 8);
    c.tag = optional(st, 9);
    c.object = st.isNull(10) ? "" : st.text(10);
    c.requestedBytes = optional(st, 11);
    c.sinceNs = st.int64(12);
    c.waitedNs = st.int64(13);
    c.requests = optional(st, 14);
    return c;
}

Status readUnfinished(sqlite3* db, std::map<int64_t, HangRank*>& byRank, HangSection& s) {
    schema::Statement st(
        db, "SELECT v.event_id, v.rank, v.tid, v.name, v.class, v.communicator,"
            " (SELECT size FROM communicator WHERE key = v.communicator LIMIT 1), v.seq, v.peer,"
            " d.tag, v.object, u.requested_bytes, v.ts_ns, v.dur_ns,"
            " (SELECT value FROM event_arg a WHERE a.event_id = u.event_id AND a.key = 'requests')"
            // CROSS JOIN keeps the (few) unfinished events the outer loop: without statistics
            // the planner scanned every event of the trace and looked each one up here.
            " FROM event_unfinished u CROSS JOIN event_view v ON v.event_id = u.event_id"
            " LEFT JOIN event_detail d ON d.event_id = u.event_id"
            " WHERE v.rank IS NOT NULL ORDER BY v.rank, v.event_id");
    if (!st.valid()) return st.error();
    while (st.step()) {
        HangCall c = callOf(st);
        s.unfinishedCalls++;
        if (auto it = byRank.find(c.rank); it != byRank.end()) it->second->calls.push_back(std::move(c));
    }
    return st.error();
}

/// The member ranks of `communicator`: every rank for one as large as the job, else the ranks
/// with an event on it.
std::vector<int64_t> membersOf(sqlite3* db, const HangSection& s, const std::string& communicator) {
    std::vector<int64_t> members;
    schema::Statement size(db, "SELECT size FROM communicator WHERE key = ? LIMIT 1");
    size.bind(1, communicator);
    if (size.step() && !size.isNull(0) && size.int64(0) == int64_t(s.ranks.size())) {
        for (const HangRank& r : s.ranks) members.push_back(r.rank);
        return members;
    }
    schema::Statement st(db, "SELECT DISTINCT p.rank FROM event e"
                             " JOIN communicator cm ON cm.id = e.communicator_id"
                             " JOIN track t ON t.id = e.track_id JOIN process p ON p.id = t.process_id"
                             " WHERE cm.key = ? AND p.rank IS NOT NULL ORDER BY p.rank");
    st.bind(1, communicator);
    while (st.step()) members.push_back(st.int64(0));
    return members;
}

class HangAnalysis final : public AnalysisFamily {
public:
    std::string_view name() const override { return HangSection::kName; }

    Status conclude(AnalysisContext& ctx, Analysis& an) const override {
        sqlite3* db = detail::db(ctx.trace);
        if (!schema::hasTable(db, schema::table::kEventUnfinished)) return {}; // an older trace
        auto s = std::make_shared<HangSection>();
        HPCPROF_RETURN_IF_ERROR(readRanks(db, *s));
        std::map<int64_t, HangRank*> byRank;
        for (HangRank& r : s->ranks) byRank[r.rank] = &r;
        HPCPROF_RETURN_IF_ERROR(readUnfinished(db, byRank, *s));
        if (s->unfinishedCalls == 0) return {};
        HPCPROF_RETURN_IF_ERROR(readLastCalls(db, byRank));
        HPCPROF_RETURN_IF_ERROR(readNcclStates(db, *s));
        diagnoseHang(*s, [&](const std::string& comm) { return membersOf(db, *s, comm); });
        an.sections[HangSection::kName] = std::move(s);
        return {};
    }

    std::vector<advice::RuleSpec> rules() const override { return advice::hangRules(); }
};

} // namespace

std::unique_ptr<AnalysisFamily> makeHangAnalysis() { return std::make_unique<HangAnalysis>(); }

} // namespace hpcprof::analyzer

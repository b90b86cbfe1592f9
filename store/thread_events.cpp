// SPDX-License-Identifier: MIT
#include "thread_events.hpp"

#include <algorithm>
#include <cassert>
#include <string>

#include "in_flight.hpp"

namespace hpcprof::store {

namespace raw = schema::raw;
using schema::Stat;

int64_t ThreadEvents::opName(uint16_t op, const schema::OpInfo& info) {
    if (op >= m_opNames.size()) m_opNames.resize(size_t(op) + 1, 0);
    int64_t& id = m_opNames[op];
    if (id == 0) id = m_w.internString(info.name);
    return id;
}

bool ThreadEvents::row(const Process& p, const ThreadRecords& t, const RawEvent& e, EventRow& row,
                       EventDetail& d, std::vector<PendingArg>& args) {
    const schema::OpInfo* info = schema::findOp(e.op);
    if (!info) {
        p.addStat(Stat::UnknownOps, 1);
        return false;
    }
    row.ts = p.clock->ticksToTrace(e.start);
    row.dur = p.clock->converter().toDurationNs(e.start, e.end);
    if (e.unfinished) row.dur = std::max<int64_t>(0, t.unfinishedUntilTs - row.ts); // until last seen
    if (row.dur < 0) {
        p.addStat(Stat::NegativeDurations, 1);
        row.dur = 0;
    }
    row.categoryId = int64_t(info->category);
    row.nameId = opName(e.op, *info);
    row.depth = m_depth.next(row.ts, row.dur);
    if (e.bytes >= 0) row.bytes = e.bytes;
    if (e.objectId) {
        std::string_view kind;
        if (auto obj = p.strings->object(e.objectId, kind)) {
            row.objectId = *obj;
            row.categoryId = int64_t(effectiveCategory(*info, kind));
        } else {
            p.addStat(Stat::UnknownStringRefs, 1);
        }
    }
    if (!applyCommunicationFields(e, *info, p.lookup, m_w, row, d, args))
        p.addStat(Stat::UnknownStringRefs, 1);
    if (e.flags & raw::kFlagHasOffset) d.offset = e.aux;
    if (e.flags & raw::kFlagFailed) {
        d.errnoValue = e.status;
        if (e.fd >= 0) d.fd = e.fd;
    }
    return true;
}

std::vector<uint32_t> ThreadEvents::startOrder(const ThreadRecords& t) {
    const auto& events = t.events;
    // Records are written when calls end; the track wants start order (stable for ties).
    // Usually already in order (empty: as they are); nested calls (signal handlers, an MPI
    // call's inner calls) are not. The positions are sorted, not the 72-byte events: moving
    // those was a quarter of an MPI loop's conversion.
    auto byStart = [](const RawEvent& a, const RawEvent& b) { return a.start < b.start; };
    // The reader knows its decoded events' order already: only what follows them is checked.
    const size_t known = std::min(t.eventsInStartOrder, events.size());
    // The reader's count holds only while families append and never move a decoded event's start.
    assert(std::is_sorted(events.begin(), events.begin() + ptrdiff_t(known), byStart));
    if (std::is_sorted(events.begin() + ptrdiff_t(known > 0 ? known - 1 : 0), events.end(), byStart)) return {};
    std::vector<std::pair<uint64_t, uint32_t>> keys(events.size());
    for (size_t i = 0; i < events.size(); ++i) keys[i] = {events[i].start, uint32_t(i)};
    std::sort(keys.begin(), keys.end()); // (start, position): unique, so stable for ties
    std::vector<uint32_t> order(events.size());
    for (size_t i = 0; i < keys.size(); ++i) order[i] = keys[i].second;
    return order;
}

Status ThreadEvents::write(const Process& p, ThreadRecords& t, const ThreadRecording& recording,
                           int64_t& lastEnd, int64_t& events) {
    int64_t threadId = m_w.insertThread(p.processId, t.tid, t.name, recording);
    std::string trackName = t.name.empty() ? "thread " + std::to_string(t.tid)
                                           : t.name + " (" + std::to_string(t.tid) + ")";
    int64_t trackId = m_w.insertTrack(p.processId, threadId, "cpu_thread", trackName, {}, {});
    const std::vector<uint32_t> order = startOrder(t);
    m_depth.clear();
    int64_t first = 0, last = 0, count = 0;
    std::vector<PendingArg> args;
    for (size_t k = 0; k < t.events.size(); ++k) {
        const RawEvent& e = t.events[order.empty() ? k : order[k]];
        EventRow r;
        EventDetail d;
        args.clear();
        r.trackId = trackId;
        if (!row(p, t, e, r, d, args)) continue;
        ProcessConverter* owner = e.family ? p.owners[e.family - 1] : nullptr;
        if (owner) owner->decorate(e, r);
        int64_t id = m_w.insertEvent(r, d);
        if (e.unfinished) HPCPROF_RETURN_IF_ERROR(writeUnfinished(m_w, id, t.inFlight));
        if (owner) owner->inserted(e, id);
        for (const auto& a : args) {
            if (a.text.empty()) m_w.insertEventArg(id, a.key, a.value);
            else m_w.insertEventArg(id, a.key, std::string_view(a.text));
        }
        if (count == 0) first = id;
        last = id;
        ++count;
        lastEnd = std::max(lastEnd, r.ts + r.dur);
    }
    events += count;
    HPCPROF_RETURN_IF_ERROR(m_w.finishTrack(trackId, first, last, count));
    t.events.clear();
    t.events.shrink_to_fit();
    return {};
}

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
#include "hpcprof/store/live_status.hpp"

#include <algorithm>
#include <map>

#include "clock_mapping.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "in_flight.hpp"
#include "raw_reader.hpp"

namespace hpcprof::store {

namespace raw = schema::raw;

namespace {

/// Raw ticks of process `h` -> realtime ns, through its latest clock pair.
struct RealtimeOf {
    const raw::ProcessHeader& h;
    TickConverter ticks;
    int64_t operator()(uint64_t t) const {
        const raw::ClockPair& p = h.last.ticks != 0 && (h.lastSeq & 1) == 0 ? h.last : h.start;
        return ticks.toLocalNs(t) + (p.realtimeNs - p.monotonicNs);
    }
};

std::string opName(uint16_t op) {
    const schema::OpInfo* info = schema::findOp(op);
    return info ? std::string(info->name) : "op " + std::to_string(op);
}

LiveCall liveCall(const raw::InFlightCall& c, int32_t tid, const std::map<uint32_t, std::string>& strings,
                  const RealtimeOf& realtime) {
    auto text = [&](uint32_t id) {
        auto it = strings.find(id);
        return id == 0 || it == strings.end() ? std::string() : it->second;
    };
    LiveCall l;
    l.tid = tid;
    l.name = opName(c.op);
    l.communicator = text(c.commId);
    if (c.flags & raw::kFlagSeqValid) l.instance = c.instance;
    if (c.peer >= 0) l.peer = c.peer;
    if (c.commId != 0 && !(c.flags & raw::kFlagTagIsCommSize)) l.tag = c.tag;
    l.object = text(c.objectId);
    if (c.bytes >= 0) l.requestedBytes = c.bytes;
    if (c.requests > 0) l.requests = int64_t(c.requests);
    l.sinceRealtimeNs = realtime(c.start);
    l.polling = (c.flags & raw::kInFlightPolling) != 0;
    return l;
}

LiveProcess readProcess(const RawProcess& p) {
    const raw::ProcessHeader& h = p.header;
    LiveProcess out;
    out.pid = h.pid;
    if (h.rank >= 0) out.rank = h.rank;
    out.host.assign(h.host, strnlen(h.host, sizeof(h.host)));
    out.ended = h.endState != raw::EndState::Running;
    RealtimeOf realtime{h, TickConverter(h, h.tscHz)};
    RawProblems problems;
    std::vector<ThreadRecords> threads;
    std::map<uint32_t, std::string> strings; // process-wide ids
    for (const auto& f : p.threadFiles) {
        threads.push_back(readThreadFile(f, problems));
        for (auto& s : threads.back().strings) strings[s.id] = std::move(s.text);
    }
    uint64_t lastEnd = 0;
    const RawEvent* last = nullptr;
    for (const ThreadRecords& t : threads) {
        out.events += int64_t(t.events.size());
        out.dropped += int64_t(t.drops.total());
        out.tornLines += t.inFlightTorn ? 1 : 0;
        for (const RawEvent& e : t.events)
            if (!last || e.end >= lastEnd) {
                last = &e;
                lastEnd = e.end;
            }
        if (t.inFlight.op != 0) out.calls.push_back(liveCall(t.inFlight, t.tid, strings, realtime));
    }
    if (last) {
        out.lastCall = opName(last->op);
        out.lastCallEndRealtimeNs = realtime(last->end);
    }
    std::sort(out.calls.begin(), out.calls.end(),
              [](const LiveCall& a, const LiveCall& b) { return a.sinceRealtimeNs < b.sinceRealtimeNs; });
    out.lastProgressRealtimeNs = out.lastCallEndRealtimeNs;
    for (const LiveCall& c : out.calls)
        out.lastProgressRealtimeNs = std::max(out.lastProgressRealtimeNs, c.sinceRealtimeNs);
    if (out.lastProgressRealtimeNs == 0) out.lastProgressRealtimeNs = h.start.realtimeNs;
    return out;
}

} // namespace

Result<std::vector<LiveProcess>> readLiveStatus(const std::filesystem::path& rawDir) {
    RawProblems problems;
    auto procs = listProcesses(rawDir, problems);
    if (!procs) return procs.status();
    std::vector<LiveProcess> out;
    for (const RawProcess& p : *procs) // an image replaced by exec is the same process as the next
        if (p.header.endState != raw::EndState::Exec) out.push_back(readProcess(p));
    std::stable_sort(out.begin(), out.end(), [](const LiveProcess& a, const LiveProcess& b) {
        if (a.rank.has_value() != b.rank.has_value()) return a.rank.has_value();
        return a.rank ? *a.rank < *b.rank : a.pid < b.pid;
    });
    return out;
}

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
// What a parent waits for its workers: its waits that reaped a worker (process_wait events with
// the child's pid), and its reads of a pipe or socket a worker of it wrote to and its waits for
// that pipe or socket to become ready (poll/select: how Python's multiprocessing queues, PyTorch's
// data-loader queue among them, wait for data). Two scans of the events on pipes, sockets and
// process waits; the parent's time stays in its io/sync class.
#include <algorithm>
#include <map>
#include <vector>

#include "process_roles.hpp"
#include "trace_access.hpp"

namespace hpcprof::analyzer::detail {

namespace {

bool readCall(const std::string& name, const std::string& category) {
    return category == "fd_wait" || name.find("read") != std::string::npos ||
           name.find("recv") != std::string::npos;
}
bool writeCall(const std::string& name) {
    return name.find("write") != std::string::npos || name.find("send") != std::string::npos;
}

constexpr const char* kPipeEvents =
    "SELECT t.process_id, e.object_id, e.dur, s.value, c.name, e.ts FROM event e JOIN track t ON t.id = e.track_id"
    " JOIN object o ON o.id = e.object_id JOIN string s ON s.id = e.name_id"
    " JOIN category c ON c.id = e.category_id WHERE o.kind IN ('pipe', 'socket')";

constexpr const char* kWaitEvents =
    "SELECT t.process_id, e.dur, a.value FROM event e JOIN track t ON t.id = e.track_id"
    " JOIN category c ON c.id = e.category_id JOIN event_arg a ON a.event_id = e.id"
    " AND a.key = 'child_pid' WHERE c.name = 'process_wait'";

using IndexOf = std::map<int64_t, size_t>; // process.id -> index

void addWait(ProcessEntry& e, int64_t ns) {
    e.waitedForNs += ns;
    ++e.waitedForCalls;
}

struct PipeWrite {
    int64_t ts;
    size_t worker;
};
struct PipeRead {
    size_t reader;
    int64_t object, end, dur;
};

/// The worker whose write woke a wait that ended at `end`: among the reader's workers that wrote
/// to the object, the one whose write started last before it (several data-loader workers share
/// one result queue: each batch is credited to the worker that delivered it); the earliest
/// writer when none wrote before (clocks of one host agree, so this is rare).
const PipeWrite* wakingWrite(const std::vector<PipeWrite>& writes, const PipeRead& r, const ProcessRoles& roles) {
    const auto own = [&](const PipeWrite& w) { return roles.parent[w.worker] == r.reader; };
    auto after = std::upper_bound(writes.begin(), writes.end(), r.end,
                                  [](int64_t t, const PipeWrite& w) { return t < w.ts; }); // sorted by ts
    for (auto it = after; it != writes.begin();)
        if (own(*--it)) return &*it;
    auto later = std::find_if(after, writes.end(), own);
    return later != writes.end() ? &*later : nullptr;
}

/// A parent's reads of (and readiness waits on) a pipe or socket one of its workers wrote to.
Status pipeWaits(const Trace& trace, const IndexOf& indexOf, const ProcessRoles& roles,
                 std::vector<ProcessEntry>& entries) {
    std::map<int64_t, std::vector<PipeWrite>> writes; // object id -> workers' writes to it
    std::vector<PipeRead> reads;
    schema::Statement s(db(trace), kPipeEvents);
    while (s.step()) {
        auto it = indexOf.find(s.int64(0));
        if (it == indexOf.end()) continue;
        const std::string name = s.text(3);
        if (roles.role[it->second] == ProcessRole::Worker && writeCall(name))
            writes[s.int64(1)].push_back({s.int64(5), it->second});
        else if (readCall(name, s.text(4)))
            reads.push_back({it->second, s.int64(1), s.int64(5) + s.int64(2), s.int64(2)});
    }
    HPCPROF_RETURN_IF_ERROR(s.error());
    for (auto& [object, v] : writes)
        std::sort(v.begin(), v.end(), [](const PipeWrite& a, const PipeWrite& b) { return a.ts < b.ts; });
    for (const PipeRead& r : reads) {
        auto w = writes.find(r.object);
        if (w == writes.end()) continue;
        if (const PipeWrite* waking = wakingWrite(w->second, r, roles)) addWait(entries[waking->worker], r.dur);
    }
    return {};
}

} // namespace

Status waitsForWorkers(const Trace& trace, const std::vector<ProcessInfo>& ps, const ProcessRoles& roles,
                       std::vector<ProcessEntry>& entries) {
    IndexOf indexOf;
    for (size_t i = 0; i < ps.size(); ++i) indexOf[ps[i].id] = i;
    std::map<std::pair<size_t, int64_t>, size_t> childByPid; // (parent index, pid) -> worker
    for (size_t i = 0; i < ps.size(); ++i)
        if (roles.role[i] == ProcessRole::Worker && roles.parent[i]) childByPid[{*roles.parent[i], ps[i].pid}] = i;
    if (childByPid.empty()) return {};
    HPCPROF_RETURN_IF_ERROR(pipeWaits(trace, indexOf, roles, entries));
    schema::Statement waits(db(trace), kWaitEvents);
    while (waits.step()) {
        auto it = indexOf.find(waits.int64(0));
        if (it == indexOf.end()) continue;
        if (auto c = childByPid.find({it->second, waits.int64(2)}); c != childByPid.end())
            addWait(entries[c->second], waits.int64(1));
    }
    return waits.error();
}

} // namespace hpcprof::analyzer::detail

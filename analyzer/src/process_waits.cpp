// SPDX-License-Identifier: MIT
// What a parent waits for its workers: its waits that reaped a worker (process_wait events with
// the child's pid), and its reads of a pipe or socket a worker of it wrote to and its waits for
// that pipe or socket to become ready (poll/select: how Python's multiprocessing queues, PyTorch's
// data-loader queue among them, wait for data). Two scans of the events on pipes, sockets and
// process waits; the parent's time stays in its io/sync class.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

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
    "SELECT t.process_id, e.object_id, e.dur, s.value, c.name FROM event e JOIN track t ON t.id = e.track_id"
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

/// A parent's reads of (and readiness waits on) a pipe or socket one of its workers wrote to.
Status pipeWaits(const Trace& trace, const IndexOf& indexOf, const ProcessRoles& roles,
                 std::vector<ProcessEntry>& entries) {
    std::map<int64_t, std::set<size_t>> writers; // object id -> workers that wrote to it
    std::vector<std::tuple<size_t, int64_t, int64_t>> reads; // (reader, object, dur)
    schema::Statement s(db(trace), kPipeEvents);
    while (s.step()) {
        auto it = indexOf.find(s.int64(0));
        if (it == indexOf.end()) continue;
        const std::string name = s.text(3);
        if (roles.role[it->second] == ProcessRole::Worker && writeCall(name)) writers[s.int64(1)].insert(it->second);
        else if (readCall(name, s.text(4))) reads.emplace_back(it->second, s.int64(1), s.int64(2));
    }
    HPCPROF_RETURN_IF_ERROR(s.error());
    for (const auto& [reader, object, dur] : reads) {
        auto w = writers.find(object);
        if (w == writers.end()) continue;
        auto worker = std::find_if(w->second.begin(), w->second.end(),
                                   [&, r = reader](size_t k) { return roles.parent[k] == r; });
        if (worker != w->second.end()) addWait(entries[*worker], dur);
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

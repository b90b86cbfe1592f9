// SPDX-License-Identifier: MIT
#include "process_row.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace hpcprof::store {

namespace fs = std::filesystem;
namespace raw = schema::raw;

namespace {

std::string_view endStateName(raw::EndState s) {
    switch (s) {
    case raw::EndState::Exited: return "exited";
    case raw::EndState::QuickExit: return "quick_exit";
    case raw::EndState::Exec: return "exec";
    case raw::EndState::Aborted: return "aborted";
    case raw::EndState::Running: break;
    }
    return "abnormal";
}

std::string commandLine(const raw::ProcessHeader& h) {
    std::string out(h.cmdline, std::min<size_t>(h.cmdlineLength, sizeof(h.cmdline)));
    while (!out.empty() && out.back() == 0) out.pop_back();
    std::replace(out.begin(), out.end(), '\0', ' ');
    return out;
}

/// rank, rank_source, world and local size of a process row.
void fillRank(const raw::ProcessHeader& h, bool ownsRank, ProcessRow& row) {
    if (h.rank >= 0 && ownsRank) {
        row.rank = h.rank;
        row.rankSource = fixedString(h.rankSource, sizeof(h.rankSource));
    } else if (h.rank >= 0) {
        row.rankSource = "duplicate claim of rank " + std::to_string(h.rank);
    } else {
        row.rankSource = fixedString(h.rankSource, sizeof(h.rankSource));
    }
    if (h.worldSize >= 0) row.worldSize = h.worldSize;
    if (h.localRank >= 0 && row.rank) row.localRank = h.localRank;
}

} // namespace

std::vector<bool> rankOwners(const std::vector<RawProcess>& procs) {
    std::vector<bool> owner(procs.size(), false);
    std::map<int32_t, size_t> best;
    auto score = [&](size_t i) {
        int64_t records = 0;
        std::error_code ec;
        for (const auto& f : procs[i].threadFiles) records += int64_t(fs::file_size(f, ec) / 64);
        bool mpi = std::string_view(procs[i].header.rankSource) == "MPI";
        return std::pair<int, int64_t>(mpi ? 1 : 0, records);
    };
    for (size_t i = 0; i < procs.size(); ++i) {
        int32_t r = procs[i].header.rank;
        if (r < 0) continue;
        auto [it, inserted] = best.try_emplace(r, i);
        if (!inserted && score(i) > score(it->second)) it->second = i;
    }
    for (const auto& [rank, i] : best) owner[i] = true;
    return owner;
}

bool endedAbnormally(const raw::ProcessHeader& h) { return h.endState == raw::EndState::Running; }

ProcessRow processRow(const RawProcess& p, int64_t processId, bool ownsRank, const ProcessClock& clock,
                      int64_t lastEnd, std::optional<int64_t> parentProcessId) {
    const raw::ProcessHeader& h = p.header;
    const bool abnormal = endedAbnormally(h);
    ProcessRow row;
    row.id = processId;
    fillRank(h, ownsRank, row);
    row.host = fixedString(h.host, sizeof(h.host));
    row.pid = h.pid;
    row.ppid = h.ppid;
    row.parentProcessId = parentProcessId;
    row.command = commandLine(h);
    row.exe = fixedString(h.exe, sizeof(h.exe));
    row.startTs = clock.toTrace(h.start.monotonicNs);
    row.endTs = abnormal ? lastEnd : std::max(lastEnd, clock.toTrace(h.endMonotonicNs));
    row.endState = std::string(endStateName(h.endState));
    if (!abnormal && h.exitCode >= 0) row.exitCode = h.exitCode;
    clock.describe(h, row);
    row.rawDir = p.dir.filename().string();
    return row;
}

} // namespace hpcprof::store

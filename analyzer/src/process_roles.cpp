// SPDX-License-Identifier: MIT
#include "process_roles.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>

namespace hpcprof::analyzer::detail {

namespace {

std::string_view baseName(std::string_view path) {
    const size_t slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// The command's words (the process table separates arguments by spaces).
std::vector<std::string_view> words(std::string_view command) {
    std::vector<std::string_view> out;
    size_t i = 0;
    while (i < command.size()) {
        const size_t e = std::min(command.find(' ', i), command.size());
        if (e > i) out.push_back(command.substr(i, e - i));
        i = e + 1;
    }
    return out;
}

bool launcherName(std::string_view name) {
    static constexpr std::array<std::string_view, 16> kNames = {
        "mpirun", "mpiexec", "mpiexec.hydra", "orterun", "orted", "prted", "prterun", "prte",
        "hydra_pmi_proxy", "srun", "slurmstepd", "torchrun", "aprun", "jsrun", "pmix_server", "flux"};
    return std::find(kNames.begin(), kNames.end(), name) != kNames.end();
}

/// torchrun started as `python -m torch.distributed.run` (or .launch) or `python .../torchrun`.
bool pythonLauncher(const std::vector<std::string_view>& w) {
    if (w.empty() || baseName(w[0]).rfind("python", 0) != 0) return false;
    for (size_t i = 1; i < w.size() && i < 4; ++i)
        if (w[i] == "torch.distributed.run" || w[i] == "torch.distributed.launch" || baseName(w[i]) == "torchrun")
            return true;
    return false;
}

/// The recorded parent: parent_process_id, else the latest process of the same host whose pid
/// is the ppid and that started no later (an exec'ed parent has several images).
std::vector<std::optional<size_t>> parents(const std::vector<ProcessInfo>& ps) {
    std::map<int64_t, size_t> byId;
    for (size_t i = 0; i < ps.size(); ++i) byId[ps[i].id] = i;
    std::vector<std::optional<size_t>> out(ps.size());
    for (size_t i = 0; i < ps.size(); ++i) {
        if (ps[i].parentProcessId)
            if (auto it = byId.find(*ps[i].parentProcessId); it != byId.end() && it->second != i) {
                out[i] = it->second;
                continue;
            }
        if (!ps[i].ppid) continue;
        for (size_t j = 0; j < ps.size(); ++j)
            if (j != i && ps[j].pid == *ps[i].ppid && ps[j].host == ps[i].host && ps[j].startTs <= ps[i].startTs &&
                (!out[i] || ps[j].startTs >= ps[*out[i]].startTs))
                out[i] = j;
    }
    return out;
}

} // namespace

bool isLauncherCommand(const std::string& command) {
    const auto w = words(command);
    return !w.empty() && (launcherName(baseName(w[0])) || pythonLauncher(w));
}

ProcessRoles processRoles(const std::vector<ProcessInfo>& ps, bool launchersAnalysed) {
    ProcessRoles r;
    r.anyRank = std::any_of(ps.begin(), ps.end(), [](const ProcessInfo& p) { return p.rank.has_value(); });
    r.parent = parents(ps);
    r.role.assign(ps.size(), ProcessRole::Other);
    r.owner.assign(ps.size(), std::nullopt);
    std::vector<int> state(ps.size(), 0); // 0 unknown, 1 in progress (a cycle in damaged data), 2 done
    auto decide = [&](auto&& self, size_t i) -> void {
        if (state[i] != 0) return;
        state[i] = 1;
        const ProcessInfo& p = ps[i];
        std::optional<size_t> up = r.parent[i];
        if (up) self(self, *up);
        if (p.rank) {
            r.role[i] = ProcessRole::Rank;
            r.owner[i] = i;
        } else if (!launchersAnalysed && isLauncherCommand(p.command)) {
            r.role[i] = ProcessRole::Launcher;
        } else if (up && state[*up] == 2 && r.owner[*up]) {
            r.role[i] = ProcessRole::Worker; // started by a rank, a main process or their worker
            r.owner[i] = r.owner[*up];
        } else if (!r.anyRank) {
            r.role[i] = ProcessRole::Main;
            r.owner[i] = i;
        }
        state[i] = 2;
    };
    for (size_t i = 0; i < ps.size(); ++i) decide(decide, i);
    return r;
}

} // namespace hpcprof::analyzer::detail

// SPDX-License-Identifier: MIT
#include "node_layout.hpp"

#include <unistd.h>

#include <cstdlib>
#include <vector>

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {

/// A positive or zero integer variable; -1 when unset or not a number.
int envInt(const char* name) {
    const char* v = std::getenv(name);
    if (!v || !*v) return -1;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    return (*end || n < 0 || n > 1'000'000'000) ? -1 : int(n);
}

std::string hostName() {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0) return "host";
    return host;
}

/// Slurm's tasks per node, "2(x3),1" -> {2, 2, 2, 1}.
std::vector<int> expandTasksPerNode(const std::string& text) {
    std::vector<int> out;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find(',', pos);
        std::string item = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
        int count = std::atoi(item.c_str()), times = 1;
        if (auto x = item.find("(x"); x != std::string::npos) times = std::atoi(item.c_str() + x + 2);
        for (int i = 0; i < times && out.size() < 1'000'000; ++i) out.push_back(count);
        if (end == std::string::npos) break;
        pos = end + 1;
    }
    return out;
}

/// HPCPROF_SIM_NODES=N: ranks in N equal blocks, block k on "node<k>".
bool simulated(const RankLaunch& l, NodeLayout& n) {
    int nodes = envInt("HPCPROF_SIM_NODES");
    if (nodes < 1 || nodes > l.worldSize) return false;
    int k = int(int64_t(l.rank) * nodes / l.worldSize);
    auto firstOf = [&](int node) { return int((int64_t(node) * l.worldSize + nodes - 1) / nodes); };
    n.node = "node" + std::to_string(k);
    n.nodeCount = nodes;
    n.localSize = firstOf(k + 1) - firstOf(k);
    n.simulated = true;
    return true;
}

bool slurm(NodeLayout& n) {
    int nodes = envInt("SLURM_STEP_NUM_NODES");
    if (nodes < 1) nodes = envInt("SLURM_NNODES");
    if (nodes < 1) nodes = envInt("SLURM_JOB_NUM_NODES");
    int id = envInt("SLURM_NODEID");
    const char* perNode = std::getenv("SLURM_STEP_TASKS_PER_NODE");
    if (!perNode) perNode = std::getenv("SLURM_TASKS_PER_NODE");
    if (nodes < 1 || id < 0 || id >= nodes || !perNode) return false;
    std::vector<int> tasks = expandTasksPerNode(perNode);
    if (int(tasks.size()) != nodes || tasks[size_t(id)] < 1) return false;
    n.node = "node" + std::to_string(id);
    n.nodeCount = nodes;
    n.localSize = tasks[size_t(id)];
    return true;
}

bool torchrun(NodeLayout& n) {
    int world = envInt("WORLD_SIZE"), local = envInt("LOCAL_WORLD_SIZE"), group = envInt("GROUP_RANK");
    if (world < 1 || local < 1 || group < 0 || world % local != 0) return false;
    n.node = "node" + std::to_string(group);
    n.nodeCount = world / local;
    n.localSize = local;
    return group < n.nodeCount;
}

bool openMpi(NodeLayout& n) {
    int nodes = envInt("OMPI_MCA_orte_num_nodes"), local = envInt("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (nodes < 1 || local < 1) return false;
    n.node = hostName();
    n.nodeCount = nodes;
    n.localSize = local;
    return true;
}

std::string sanitize(std::string s) {
    for (char& c : s)
        if (!isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '.' && c != '_') c = '_';
    return s;
}

fs::path localBase(const std::string& rawDirBase) {
    if (!rawDirBase.empty()) return fs::absolute(rawDirBase);
    const char* tmp = std::getenv("TMPDIR");
    return (tmp && *tmp) ? fs::path(tmp) : fs::path("/tmp");
}

} // namespace

std::optional<NodeLayout> detectNodeLayout(const RankLaunch& launch, const std::string& output,
                                           const std::string& rawDirBase) {
    NodeLayout n;
    const bool known = simulated(launch, n) || (std::getenv("SLURM_PROCID") && slurm(n)) ||
                       (std::getenv("OMPI_COMM_WORLD_RANK") && openMpi(n)) ||
                       (std::getenv("GROUP_RANK") && torchrun(n));
    if (!known) return std::nullopt;
    n.node = sanitize(n.node);
    std::error_code ec;
    n.shardsRoot = fs::absolute(output + ".shards", ec);
    n.shardsDir = n.shardsRoot / launch.jobId;
    n.localDir = localBase(rawDirBase) /
                 ("hpcprof-" + std::to_string(getuid()) + "-" + launch.jobId) / n.node;
    return n;
}

} // namespace hpcprof::cli

// SPDX-License-Identifier: MIT
// Which node a per-rank wrapper runs on, and how the job is spread over nodes, from the
// launcher's environment (issue 22):
//
//   launcher          nodes                                node id            ranks on this node
//   HPCPROF_SIM_NODES N (simulated, tests)                 node<rank*N/world> ranks of that block
//   Slurm (srun)      SLURM_STEP_NUM_NODES / SLURM_NNODES  node<SLURM_NODEID> SLURM_STEP_TASKS_PER_NODE
//   torchrun          WORLD_SIZE / LOCAL_WORLD_SIZE        node<GROUP_RANK>   LOCAL_WORLD_SIZE
//   Open MPI (ORTE)   OMPI_MCA_orte_num_nodes              host name          OMPI_COMM_WORLD_LOCAL_SIZE
//
// A wrapper that cannot tell all three (another launcher, Open MPI 5 without the ORTE count)
// keeps the shared-folder form of the per-rank launch (rank_coordination.hpp): raw data under
// <output>.raw/<job id>/, the last rank converts. A wrong count would merge before every node is
// done, so nothing is guessed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "rank_coordination.hpp"

namespace hpcprof::cli {

struct NodeLayout {
    std::string node;     ///< node0, node1, ... or the host name (Open MPI)
    int nodeCount = 0;    ///< nodes of the job
    int localSize = 0;    ///< ranks (wrappers) on this node
    bool simulated = false;
    std::filesystem::path localDir;  ///< node-local raw folder: <base>/hpcprof-<uid>-<job>/<node>
    std::filesystem::path shardsRoot; ///< shared: <output>.shards (claimed like <output>.raw)
    std::filesystem::path shardsDir;  ///< shared: <output>.shards/<job id>
};

/// The node layout of a per-rank launch, or nothing when it cannot be known (see above).
/// `rawDirBase`: --raw-dir; empty = $TMPDIR, else /tmp.
std::optional<NodeLayout> detectNodeLayout(const RankLaunch& launch, const std::string& output,
                                           const std::string& rawDirBase);

} // namespace hpcprof::cli

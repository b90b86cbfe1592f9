// SPDX-License-Identifier: MIT
// The per-rank launch form: `mpirun -np N hpcprof run -o T -- ./app` or
// `srun hpcprof run -o T -- ./app` starts one hpcprof wrapper per rank. They share one raw folder
// (T.raw/<job id>/) and the last wrapper to finish converts it into T. Each wrapper leaves a
// `done-<rank>` marker; the one that completes the set of world-size markers and wins an atomic
// mkdir of `merging` writes the trace. A wrapper that is killed leaves the set incomplete: run
// `hpcprof merge T.raw/<job id> -o T` by hand (the other wrappers say so).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace hpcprof::cli {

struct RankLaunch {
    int rank = -1;
    int worldSize = -1;
    std::string jobId;            ///< from the launcher (PMIx namespace, Slurm job.step, ...)
    std::filesystem::path rawDir; ///< shared: <output>.raw/<jobId>
};

/// Detects the per-rank form from this process's own environment (rank variables of a launcher
/// with world size > 1); empty when hpcprof wraps the whole job (or a single process).
std::optional<RankLaunch> detectRankLaunch(const std::string& output);

/// Marks this rank done; true when this wrapper is the one that must write the trace.
bool finishRankAndElectMerger(const RankLaunch& launch);

} // namespace hpcprof::cli

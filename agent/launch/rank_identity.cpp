// SPDX-License-Identifier: MIT
#include "hpcprof/launch/rank_identity.hpp"

#include <cstdlib>

namespace hpcprof::agent {

namespace {
bool parseInt(const char* s, int& out) {
    if (!s || !*s) return false;
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (*end != 0 || v < 0 || v > 1'000'000'000) return false;
    out = int(v);
    return true;
}
} // namespace

RankIdentity rankFromEnvironment(const char* (*getenvFn)(const char*)) {
    auto get = [&](const char* n) -> const char* {
        return getenvFn ? getenvFn(n) : std::getenv(n);
    };
    // Each launcher family: rank, size, local rank. Launchers agree within a family, so the
    // first family whose rank variable parses wins.
    struct Family {
        const char* rank;
        const char* size;
        const char* local;
    };
    static constexpr Family kFamilies[] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
        {"PMIX_RANK", "PMIX_SIZE", "PMIX_LOCAL_RANK"},
        {"PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"},
        {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
        {"RANK", "WORLD_SIZE", "LOCAL_RANK"},
    };
    RankIdentity id;
    for (const auto& f : kFamilies) {
        if (!parseInt(get(f.rank), id.rank)) continue;
        id.source = f.rank;
        if (!parseInt(get(f.size), id.worldSize)) id.worldSize = -1;
        if (!parseInt(get(f.local), id.localRank)) id.localRank = -1;
        return id;
    }
    id.rank = -1;
    return id;
}

} // namespace hpcprof::agent

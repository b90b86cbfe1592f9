// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "hpcprof/launch/rank_identity.hpp"

using hpcprof::agent::rankFromEnvironment;

namespace {
std::map<std::string, std::string> g_env;
const char* fakeGetenv(const char* name) {
    auto it = g_env.find(name);
    return it == g_env.end() ? nullptr : it->second.c_str();
}
} // namespace

TEST_CASE("rank comes from each launcher family's variables", "[agent][rank]") {
    struct Case {
        std::map<std::string, std::string> env;
        int rank, size, local;
        std::string source;
    };
    std::vector<Case> cases = {
        {{{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}},
         3, 8, 1, "OMPI_COMM_WORLD_RANK"},
        {{{"PMIX_RANK", "5"}}, 5, -1, -1, "PMIX_RANK"},
        {{{"PMI_RANK", "2"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}}, 2, 4, 0, "PMI_RANK"},
        {{{"SLURM_PROCID", "7"}, {"SLURM_NTASKS", "16"}, {"SLURM_LOCALID", "3"}}, 7, 16, 3, "SLURM_PROCID"},
        {{{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}}, 1, 2, 1, "RANK"},
        // Open MPI wins over torchrun's variables when both are present.
        {{{"RANK", "9"}, {"OMPI_COMM_WORLD_RANK", "0"}}, 0, -1, -1, "OMPI_COMM_WORLD_RANK"},
    };
    for (const auto& c : cases) {
        g_env = c.env;
        auto id = rankFromEnvironment(fakeGetenv);
        INFO(c.source);
        CHECK(id.rank == c.rank);
        CHECK(id.worldSize == c.size);
        CHECK(id.localRank == c.local);
        CHECK(std::string(id.source) == c.source);
    }
}

TEST_CASE("no launcher variables or garbage values give a non-rank process", "[agent][rank]") {
    g_env = {};
    CHECK(rankFromEnvironment(fakeGetenv).rank == -1);
    g_env = {{"RANK", "abc"}};
    CHECK(rankFromEnvironment(fakeGetenv).rank == -1);
    g_env = {{"SLURM_PROCID", "-4"}};
    CHECK(rankFromEnvironment(fakeGetenv).rank == -1);
    g_env = {{"RANK", ""}, {"PMI_RANK", "6"}};
    CHECK(rankFromEnvironment(fakeGetenv).rank == 6);
}

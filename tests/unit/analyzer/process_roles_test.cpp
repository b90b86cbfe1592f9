// SPDX-License-Identifier: MIT
// Process roles (analyzer/src/process_roles.hpp) on process tables shaped like real runs.
#include <catch2/catch.hpp>

#include "analyzer/src/process_roles.hpp"

using namespace hpcprof::analyzer;
using detail::isLauncherCommand;
using detail::processRoles;

namespace {

ProcessInfo proc(int64_t id, int64_t pid, std::optional<int64_t> ppid, const std::string& command,
                 std::optional<int64_t> rank = std::nullopt, std::optional<int64_t> parentId = std::nullopt) {
    ProcessInfo p;
    p.id = id;
    p.pid = pid;
    p.ppid = ppid;
    p.command = command;
    p.rank = rank;
    p.rankSource = rank ? "MPI" : "";
    p.parentProcessId = parentId;
    p.host = "n1";
    p.startTs = id;
    return p;
}

} // namespace

TEST_CASE("launchers and daemons are known by their command", "[analyzer][process]") {
    for (const char* c : {"mpirun -np 4 ./a", "/usr/bin/mpiexec -n 2 a", "orted -mca ess env", "prted --x",
                          "srun -n 4 ./a", "/opt/bin/torchrun --nproc-per-node 2 train.py",
                          "python3 -m torch.distributed.run --nproc-per-node 2 train.py"})
        CHECK(isLauncherCommand(c));
    for (const char* c : {"./a", "python3 train.py", "python3 -m torch_worker", "/bin/sh -c mpirun"})
        CHECK_FALSE(isLauncherCommand(c));
}

TEST_CASE("a rank's forked workers are its workers; mpirun is a launcher", "[analyzer][process]") {
    // mpirun (10) -> ranks 0 and 1 (11, 12); rank 0 forks a data-loader worker (13), which forks
    // one of its own (14); a shell around mpirun (9) is neither.
    std::vector<ProcessInfo> ps = {proc(1, 9, 1, "/bin/sh run.sh"), proc(2, 10, 9, "mpirun -np 2 ./a"),
                                   proc(3, 11, 10, "./a", 0), proc(4, 12, 10, "./a", 1),
                                   proc(5, 13, 11, "./a", std::nullopt, 3), proc(6, 14, 13, "./a")};
    auto r = processRoles(ps);
    CHECK(r.anyRank);
    CHECK(r.role == std::vector<ProcessRole>{ProcessRole::Other, ProcessRole::Launcher, ProcessRole::Rank,
                                             ProcessRole::Rank, ProcessRole::Worker, ProcessRole::Worker});
    CHECK(r.owner[4] == 2u);
    CHECK(r.owner[5] == 2u); // a worker's worker belongs to the rank too
    CHECK(r.parent[4] == 2u); // parent_process_id first
    CHECK(r.parent[5] == 4u); // else host + ppid
}

TEST_CASE("without ranks the top processes are main processes and their children workers",
          "[analyzer][process]") {
    std::vector<ProcessInfo> ps = {proc(1, 20, 1, "./bench"), proc(2, 21, 20, "./bench", std::nullopt, 1),
                                   proc(3, 22, 20, "./bench", std::nullopt, 1), proc(4, 30, 1, "./other")};
    auto r = processRoles(ps);
    CHECK_FALSE(r.anyRank);
    CHECK(r.role == std::vector<ProcessRole>{ProcessRole::Main, ProcessRole::Worker, ProcessRole::Worker,
                                             ProcessRole::Main});
    CHECK(r.owner[1] == 0u);
    CHECK(r.owner[3] == 3u);
}

TEST_CASE("a trace of launchers only analyses them rather than nothing", "[analyzer][process]") {
    std::vector<ProcessInfo> ps = {proc(1, 20, 1, "srun hostname")};
    CHECK(processRoles(ps).role[0] == ProcessRole::Launcher);
    CHECK(processRoles(ps, true).role[0] == ProcessRole::Main);
}

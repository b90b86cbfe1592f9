// SPDX-License-Identifier: MIT
// Jobs beyond one node (issue 22), on simulated nodes: 8 Open MPI ranks, each under its own
// hpcprof wrapper, act as 4 nodes of 2 ranks (HPCPROF_SIM_NODES=4). Raw data stays in each
// node's local folder ($TMPDIR), each node converts its ranks into a shard, the last node merges
// the shards; the result must equal the conversion of the same raw data in one piece, and a
// lost node must give a partial trace that names it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <set>
#include <sstream>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

struct Job {
    TempDir dir;
    fs::path out() const { return dir.path() / "out"; }
    fs::path data() const { return dir.path() / "data"; }
    fs::path local() const { return dir.path() / "local"; }
    std::string trace() const { return (out() / "trace.hpcprof").string(); }
    Job() {
        fs::create_directories(out());
        fs::create_directories(data());
        fs::create_directories(local());
    }
};

ProcessResult runOnNodes(const Job& job, const std::vector<std::string>& runFlags,
                         std::vector<std::string> env) {
    std::vector<std::string> argv = {"mpirun", "-np", "8", hpcprofBinary(), "run", "-q", "-o", job.trace()};
    argv.insert(argv.end(), runFlags.begin(), runFlags.end());
    argv.insert(argv.end(), {"--", sampleBinary("mpi_nodes"), job.data().string()});
    env.insert(env.end(), kMpiTestEnv.begin(), kMpiTestEnv.end());
    env.push_back("HPCPROF_SIM_NODES=4");
    env.push_back("TMPDIR=" + job.local().string());
    return runProcess(argv, env);
}

/// Every file under `root`, relative, sorted.
std::vector<std::string> filesUnder(const fs::path& root) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(root))
        if (!e.is_directory()) out.push_back(fs::relative(e.path(), root).string());
    std::sort(out.begin(), out.end());
    return out;
}

/// The node-local folders of the job: <TMPDIR>/hpcprof-<uid>-<job>/node<k>.
std::vector<fs::path> nodeFolders(const Job& job) {
    std::vector<fs::path> out;
    for (const auto& jobDir : fs::directory_iterator(job.local()))
        if (jobDir.is_directory())
            for (const auto& node : fs::directory_iterator(jobDir.path())) out.push_back(node.path());
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::string> sortedLines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
}

const std::vector<std::string> kTables = {"string", "category", "process", "thread", "track",
                                          "object", "communicator", "event", "event_detail",
                                          "event_arg", "mpi_completion", "counter_track", "counter",
                                          "stats", "stats_by_process"};

/// What each rank did, as the program counts it (checked against both traces).
void checkRanks(const TraceQuery& q) {
    CHECK(q.rows("SELECT rank FROM process WHERE rank IS NOT NULL ORDER BY rank") ==
          std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"});
    CHECK(q.rows("SELECT rank, COUNT(*), SUM(bytes) FROM event_view WHERE name = 'MPI_Sendrecv'"
                 " GROUP BY rank ORDER BY rank") ==
          std::vector<std::string>{"0|10|40960", "1|10|40960", "2|10|40960", "3|10|40960",
                                   "4|10|40960", "5|10|40960", "6|10|40960", "7|10|40960"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'MPI_Allreduce'") == 80);
    CHECK(q.rows("SELECT DISTINCT rank || '>' || peer FROM event_view WHERE name = 'MPI_Sendrecv'"
                 " AND rank IN (0, 7) ORDER BY rank") == std::vector<std::string>{"0>2", "7>1"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'write' AND object LIKE '%/rank-%.dat'"
                   " AND bytes = 1000") == 80);
}

/// A warning every node's converter gives (here: counters left out with more ranks than CPUs)
/// is said once, by the merge, with the number of nodes, not once per node.
void checkWarningsOnce(const std::string& err) {
    size_t said = 0;
    for (size_t at = err.find("warning: counters not counted"); at != std::string::npos;
         at = err.find("warning: counters not counted", at + 1))
        ++said;
    CHECK(said <= 1);
    if (said == 1) CHECK_THAT(err, Catch::Contains("(4 nodes)"));
}

} // namespace

TEST_CASE("8 ranks on 4 simulated nodes: node-local raw data, one shard per node, merged into the "
          "trace one conversion of the same data gives", "[integration][mpi][nodes]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    Job job;
    auto r = runOnNodes(job, {"--keep-raw"}, {});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(sortedLines(r.out).size() == 8);
    CHECK_THAT(r.out, Catch::Contains("rank 7 allreduce 10 sendrecv 10 writes 10"));
    checkWarningsOnce(r.err);
    // Only the trace reached the shared folder (the shards were removed after the merge).
    CHECK(filesUnder(job.out()) == std::vector<std::string>{"trace.hpcprof"});
    TraceQuery q(job.trace());
    checkRanks(q);
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'partial'") == "false");
    auto nodes = q.text("SELECT value FROM metadata WHERE key = 'nodes_merged'");
    CHECK(std::set<std::string>{nodes.substr(0, 5), nodes.substr(6, 5), nodes.substr(12, 5),
                                nodes.substr(18, 5)} ==
          std::set<std::string>{"node0", "node1", "node2", "node3"});

    // The raw data stayed on the "nodes" (kept: --keep-raw); converted in one piece it must give
    // the same trace: the same rows in every table, the same report.
    auto folders = nodeFolders(job);
    REQUIRE(folders.size() == 4);
    fs::path whole = job.dir.path() / "whole.raw";
    fs::create_directories(whole);
    for (const auto& node : folders)
        for (const auto& e : fs::directory_iterator(node))
            if (e.path().filename().string().rfind("proc-", 0) == 0)
                fs::copy(e.path(), whole / e.path().filename(), fs::copy_options::recursive);
    auto merged = runProcess({hpcprofBinary(), "merge", whole.string(), "-o", job.dir / "whole.hpcprof"});
    INFO(merged.err);
    REQUIRE(merged.exitCode == 0);
    TraceQuery one(job.dir / "whole.hpcprof");
    checkRanks(one);
    for (const auto& table : kTables) {
        INFO(table);
        CHECK(q.scalar("SELECT COUNT(*) FROM " + table) == one.scalar("SELECT COUNT(*) FROM " + table));
    }
    // Processes, threads, lanes, counters and events keep the ids one conversion gives them;
    // every event has the same time, name, file and communicator.
    for (const char* table : {"process", "thread", "track", "counter_track", "counter"}) {
        INFO(table);
        CHECK(q.rows(std::string("SELECT * FROM ") + table + " ORDER BY id") ==
              one.rows(std::string("SELECT * FROM ") + table + " ORDER BY id"));
    }
    CHECK(q.rows("SELECT * FROM event_view ORDER BY event_id") ==
          one.rows("SELECT * FROM event_view ORDER BY event_id"));
    // The same report (wait states, findings with their event ids), but for the trace's name.
    auto report = [](const std::string& trace) {
        auto r = runProcess({hpcprofBinary(), "report", "--format", "json", trace});
        REQUIRE(r.exitCode == 0);
        auto doc = nlohmann::json::parse(r.out);
        doc.erase("trace");
        return doc;
    };
    auto fromShards = report(job.trace());
    CHECK(fromShards.dump() == report(job.dir / "whole.hpcprof").dump());
    // Wait states across nodes: the 10 world allreduces complete, the 80 sendrecv messages
    // (each rank's to a rank on another node) matched.
    CHECK(fromShards["wait_states"]["complete_instances"] == 10);
    CHECK(fromShards["wait_states"]["matched_messages"] == 80);
    CHECK(fromShards["wait_states"]["unmatched_messages"] == 0);
}

TEST_CASE("a node lost before delivering its shard: the other shards make a partial trace that "
          "names its node and ranks", "[integration][mpi][nodes]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    Job job;
    auto r = runOnNodes(job, {}, {"HPCPROF_SIM_FAIL_NODE=node2"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK_FALSE(fs::exists(job.trace()));
    // The shared folder holds the three delivered shards and the job's lock, nothing else.
    auto files = filesUnder(job.out());
    REQUIRE(files.size() == 4);
    CHECK(files[0] == "trace.hpcprof.shards/.hpcprof-run/lock");
    const std::string jobId = fs::path(files[1]).parent_path().filename().string();
    CHECK(files[1] == "trace.hpcprof.shards/" + jobId + "/shard-node0.hpcprof");
    CHECK(files[2] == "trace.hpcprof.shards/" + jobId + "/shard-node1.hpcprof");
    CHECK(files[3] == "trace.hpcprof.shards/" + jobId + "/shard-node3.hpcprof");
    // The lost node's raw data is still on it; the others' was deleted once delivered.
    auto folders = nodeFolders(job);
    REQUIRE(folders.size() == 1);
    CHECK(folders[0].filename() == "node2");

    auto m = runProcess({hpcprofBinary(), "merge", (job.out() / "trace.hpcprof.shards" / jobId).string(),
                         "-o", job.trace()});
    INFO(m.err);
    REQUIRE(m.exitCode == 0);
    CHECK_THAT(m.err, Catch::Contains("missing nodes node2; ranks 4,5"));
    TraceQuery q(job.trace());
    CHECK(q.rows("SELECT rank FROM process WHERE rank IS NOT NULL ORDER BY rank") ==
          std::vector<std::string>{"0", "1", "2", "3", "6", "7"});
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'partial'") == "true");
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'nodes_missing'") == "node2");
    CHECK(q.text("SELECT value FROM metadata WHERE key = 'ranks_missing'") == "4,5");
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name = 'MPI_Allreduce'") == 60);

    // The node is back: its raw data, converted by hand into its shard, completes the trace
    // (docs/user-guide.md, "After a failure").
    const fs::path shards = job.out() / "trace.hpcprof.shards" / jobId;
    auto c = runProcess({hpcprofBinary(), "merge", folders[0].string(), "--node", "node2", "-o",
                         (shards / "shard-node2.hpcprof").string()});
    INFO(c.err);
    REQUIRE(c.exitCode == 0);
    auto full = runProcess({hpcprofBinary(), "merge", shards.string(), "-o", job.trace(), "--force"});
    INFO(full.err);
    REQUIRE(full.exitCode == 0);
    CHECK_THAT(full.err, !Catch::Contains("missing"));
    TraceQuery whole(job.trace());
    checkRanks(whole);
    CHECK(whole.text("SELECT value FROM metadata WHERE key = 'partial'") == "false");
}

TEST_CASE("srun- and torchrun-style wrappers on 2 nodes (launcher variables) deliver one shard per "
          "node and one trace", "[integration][nodes]") {
    struct Launcher {
        const char* name;
        std::vector<std::string> (*env)(int task);
    };
    // 4 tasks, 2 per node, as srun and torchrun describe them to each task.
    const Launcher launchers[] = {
        {"slurm",
         [](int t) {
             return std::vector<std::string>{"SLURM_PROCID=" + std::to_string(t), "SLURM_NTASKS=4",
                                             "SLURM_NNODES=2", "SLURM_NODEID=" + std::to_string(t / 2),
                                             "SLURM_STEP_TASKS_PER_NODE=2(x2)", "SLURM_JOB_ID=77",
                                             "SLURM_STEP_ID=0"};
         }},
        {"torchrun",
         [](int t) {
             return std::vector<std::string>{"RANK=" + std::to_string(t), "WORLD_SIZE=4",
                                             "LOCAL_RANK=" + std::to_string(t % 2), "LOCAL_WORLD_SIZE=2",
                                             "GROUP_RANK=" + std::to_string(t / 2),
                                             "TORCHELASTIC_RUN_ID=r77"};
         }},
    };
    for (const auto& launcher : launchers) {
        DYNAMIC_SECTION(launcher.name) {
            Job job;
            std::vector<std::thread> tasks;
            std::vector<ProcessResult> results(4);
            for (int t = 0; t < 4; ++t) {
                fs::create_directories(job.data() / std::to_string(t));
                tasks.emplace_back([&, t] {
                    auto env = launcher.env(t);
                    env.push_back("TMPDIR=" + job.local().string());
                    results[size_t(t)] = runProcess(
                        {hpcprofBinary(), "run", "-q", "-o", job.trace(), "--",
                         sampleBinary("io_sample"), (job.data() / std::to_string(t)).string()},
                        env);
                });
            }
            for (auto& t : tasks) t.join();
            for (const auto& res : results) {
                INFO(res.err);
                CHECK(res.exitCode == 0);
            }
            CHECK(filesUnder(job.out()) == std::vector<std::string>{"trace.hpcprof"});
            CHECK(nodeFolders(job).empty()); // converted and deleted on each node
            TraceQuery q(job.trace());
            CHECK(q.rows("SELECT rank FROM process WHERE rank IS NOT NULL ORDER BY rank") ==
                  std::vector<std::string>{"0", "1", "2", "3"});
            CHECK(q.rows("SELECT rank, COUNT(*) FROM event_view WHERE object LIKE '%/posix.dat'"
                         " AND name = 'write' GROUP BY rank") ==
                  std::vector<std::string>{"0|3", "1|3", "2|3", "3|3"});
            auto nodes = q.text("SELECT value FROM metadata WHERE key = 'nodes_merged'");
            CHECK((nodes == "node0,node1" || nodes == "node1,node0"));
        }
    }
}

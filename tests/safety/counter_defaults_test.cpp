// SPDX-License-Identifier: MIT
// The default counters must not slow the program (issue 17): no counter of the default lists is
// a per-thread event that costs every context switch, except hardware counters on a host that
// is not oversubscribed; and what the analysis needs is still there.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include <set>
#include <string>
#include <vector>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;

namespace {

nlohmann::json countersMeta(const TraceQuery& q) {
    return nlohmann::json::parse(q.text("SELECT value FROM metadata WHERE key = 'counters'"));
}

/// Every reason the processes gave for not counting `counter`, joined ("" if counted).
std::string reasonOf(const nlohmann::json& meta, const std::string& counter) {
    for (const auto& c : meta["unavailable"]) {
        if (c["counter"] != counter) continue;
        std::string all = c["reason"];
        for (const auto& r : c.value("reasons", nlohmann::json::array())) all += " / " + r["reason"].get<std::string>();
        return all;
    }
    return "";
}

const std::vector<std::string> kMpiEnv = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                          "OMPI_MCA_rmaps_base_oversubscribe=1"};

bool haveMpi() {
    return HPCPROF_TEST_HAVE_MPI && runProcess({"sh", "-c", "command -v mpirun"}).exitCode == 0;
}

} // namespace

TEST_CASE("the default counters attach no perf_event to the program's threads and keep what the "
          "analysis needs", "[safety][counters]") {
    for (const char* list : {"default", "software"}) {
        DYNAMIC_SECTION(list) {
            TempDir dir;
            auto r = runProcess({hpcprofBinary(), "run", "-q", "--counters", list, "-o", dir / "t.hpcprof", "--",
                                 HPCPROF_TEST_BUILD_DIR "/tests/counter_workload", "tspin", "300"});
            INFO(r.err);
            REQUIRE(r.exitCode == 0);
            TraceQuery q(dir / "t.hpcprof");
            auto meta = countersMeta(q);
            INFO(meta.dump());
            std::set<std::string> counted;
            for (const auto& c : meta["available"]) {
                CHECK(c["source"] != "perf_sw");
                counted.insert(c["counter"]);
            }
            for (const char* needed : {"task_clock", "cpu_wait", "voluntary_context_switches",
                                       "involuntary_context_switches", "context_switches", "page_faults"})
                CHECK(counted.count(needed) == 1);
            CHECK(counted.count("cpu_migrations") == 0);
            // The timer sampled the spinning main thread (10 ms period, 300 ms), with its wait
            // for a CPU, which only the sampler thread reads in a threaded program.
            CHECK(q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'task_clock' AND tid = pid") >= 10);
            CHECK(q.scalar("SELECT COUNT(*) FROM counter_view WHERE counter = 'cpu_wait' AND tid = pid") >= 10);
            CHECK(q.scalar("SELECT MAX(value) - MIN(value) FROM counter_view WHERE counter = 'task_clock'"
                           " AND tid = pid") > 20'000'000);
        }
    }
}

TEST_CASE("with more ranks than CPUs the default list leaves the hardware counters out and says why",
          "[safety][counters][mpi]") {
    if (!haveMpi()) {
        WARN("SKIPPED: no MPI");
        return;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    auto run = [&](long ranks, TempDir& dir, const std::string& counters) {
        auto r = runProcess({hpcprofBinary(), "run", "-q", "--counters", counters, "-o", dir / "t.hpcprof", "--",
                             "mpirun", "-np", std::to_string(ranks), HPCPROF_TEST_BUILD_DIR "/tests/counter_mpi_workload",
                             "2", "1"},
                            kMpiEnv);
        INFO(r.err);
        REQUIRE(r.exitCode == 0);
        return countersMeta(TraceQuery(dir / "t.hpcprof"));
    };
    TempDir over, fits, named;
    auto o = run(cores + 1, over, "default");
    std::string why = reasonOf(o, "PAPI_TOT_INS");
    INFO(o.dump());
    CHECK(why.find("more ranks than CPUs (" + std::to_string(cores + 1) + " ranks, " + std::to_string(cores) +
                   " CPUs)") != std::string::npos);
    // The ranks gave that reason; mpirun, profiled too but not a rank, gave PAPI's own.
    for (const auto& c : o["unavailable"])
        if (c["counter"] == "PAPI_TOT_INS" && c.contains("reasons"))
            for (const auto& r : c["reasons"])
                if (r["reason"].get<std::string>().find("more ranks than CPUs") != std::string::npos)
                    CHECK(r["processes"] == cores + 1);
    CHECK(reasonOf(o, "PAPI_L3_TCM").find("more ranks than CPUs") != std::string::npos);
    // As many ranks as CPUs: PAPI is asked (it counts, or gives its own reason).
    auto f = run(cores, fits, "default");
    INFO(f.dump());
    CHECK(reasonOf(f, "PAPI_TOT_INS").find("more ranks than CPUs") == std::string::npos);
    // Named, a hardware counter is asked for even on the oversubscribed host.
    auto n = run(cores + 1, named, "default,PAPI_TOT_INS");
    INFO(n.dump());
    CHECK(reasonOf(n, "PAPI_TOT_INS").find("more ranks than CPUs") == std::string::npos);
    CHECK(reasonOf(n, "PAPI_TOT_CYC").find("more ranks than CPUs") != std::string::npos);
}

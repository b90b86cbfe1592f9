// SPDX-License-Identifier: MIT
// Imports the two real PyTorch profiler traces in tests/data/kineto (two ranks of an NCCL
// training job) and checks the trace against counts and GPU times taken from the JSON by an
// independent DOM parse.
#include <zlib.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "analyzer/src/gemm_kernels.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "tests/unit/import/real_kineto.hpp"
#include "hpcprof/import/importer.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using hpcprof::test::TempDir;
using hpcprof::test::TraceQuery;

namespace {

const std::string kDataDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto";

std::string gunzip(const std::string& path) {
    gzFile f = gzopen(path.c_str(), "rb");
    REQUIRE(f);
    std::string out;
    char buf[65536];
    int n;
    while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
    gzclose(f);
    return out;
}

struct Expected {
    int64_t rank = -1;
    int64_t kernels = 0, ncclKernels = 0, memcpys = 0, memsets = 0, runtime = 0, steps = 0;
    int64_t computeNs = 0, commNs = 0, memoryNs = 0;
    int64_t linkedLaunches = 0; ///< runtime calls whose correlation id a GPU event shares
};

Expected expectedFrom(const std::string& path) {
    auto j = nlohmann::json::parse(gunzip(path));
    Expected x;
    std::set<int64_t> gpuCorrelations;
    for (const auto& e : j["traceEvents"]) {
        std::string cat = e.value("cat", "");
        if ((cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") &&
            e.contains("args") && e["args"].contains("correlation"))
            gpuCorrelations.insert(e["args"]["correlation"].get<int64_t>());
    }
    x.rank = j["distributedInfo"]["rank"].get<int64_t>();
    for (const auto& e : j["traceEvents"]) {
        if (e.value("ph", "") != "X") continue;
        std::string cat = e.value("cat", ""), name = e.value("name", "");
        // Durations are microseconds with at most three decimals in these files.
        int64_t ns = e.contains("dur") ? std::llround(e["dur"].get<double>() * 1000) : 0;
        if (cat == "kernel") {
            x.kernels++;
            if (name.rfind("nccl", 0) == 0) {
                x.ncclKernels++;
                x.commNs += ns;
            } else {
                x.computeNs += ns;
            }
        } else if (cat == "gpu_memcpy") {
            x.memcpys++;
            x.memoryNs += ns;
        } else if (cat == "gpu_memset") {
            x.memsets++;
            x.memoryNs += ns;
        } else if (cat == "cuda_runtime") {
            x.runtime++;
            if (e.contains("args") && e["args"].contains("correlation") &&
                gpuCorrelations.count(e["args"]["correlation"].get<int64_t>()))
                x.linkedLaunches++;
        } else if (cat == "user_annotation" && name.rfind("ProfilerStep#", 0) == 0) {
            x.steps++;
        }
    }
    return x;
}

} // namespace

TEST_CASE("the real Kineto traces import with every kernel, memcpy and runtime call",
          "[import][kineto][real]") {
    if (!std::filesystem::exists(kDataDir + "/sampled_rank-0.json.gz")) {
        WARN("SKIPPED: " << kDataDir << " is not there");
        return;
    }
    TempDir dir;
    import::ImportOptions o;
    o.inputs = {kDataDir}; // the directory form: both ranks
    o.output = dir / "kineto.hpcprof";
    auto r = import::importTraces(o);
    REQUIRE(r.ok());
    CHECK(r->files == 2);
    CHECK_FALSE(r->partial);
    TraceQuery q(dir / "kineto.hpcprof");
    for (int rank : {0, 1}) {
        Expected x = expectedFrom(kDataDir + "/sampled_rank-" + std::to_string(rank) + ".json.gz");
        INFO("rank " << rank);
        REQUIRE(x.rank == rank);
        CHECK(x.kernels > 1000);
        CHECK(x.ncclKernels > 0);
        auto count = [&](const std::string& where) {
            return q.scalar("SELECT COUNT(*) FROM event_view WHERE rank = " +
                            std::to_string(rank) + " AND " + where);
        };
        auto sumDur = [&](const std::string& where) {
            return q.scalar("SELECT SUM(dur_ns) FROM event_view WHERE rank = " +
                            std::to_string(rank) + " AND " + where);
        };
        CHECK(count("category IN ('gpu_kernel', 'gpu_comm_kernel')") == x.kernels);
        CHECK(count("category = 'gpu_comm_kernel'") == x.ncclKernels);
        CHECK(count("category = 'gpu_memcpy'") == x.memcpys);
        CHECK(count("category = 'gpu_memset'") == x.memsets);
        CHECK(count("category = 'cuda_api'") == x.runtime);
        CHECK(count("category = 'user_range' AND name LIKE 'ProfilerStep#%'") == x.steps);
        // Summed GPU time per class, to the ns.
        CHECK(sumDur("track_kind = 'gpu_stream' AND class = 'compute'") == x.computeNs);
        CHECK(sumDur("track_kind = 'gpu_stream' AND class = 'communication'") == x.commNs);
        CHECK(sumDur("track_kind = 'gpu_stream' AND class = 'memory'") == x.memoryNs);
        // GPU work sits on GPU stream tracks of this rank's device, API calls on CPU threads.
        CHECK(count("track_kind = 'gpu_stream' AND track NOT LIKE 'GPU " + std::to_string(rank) +
                    " stream %'") == 0);
        CHECK(count("category = 'cuda_api' AND track_kind <> 'cpu_thread'") == 0);
        // Every kernel launch carries its correlation id, and the kernel shares it.
        CHECK(x.linkedLaunches > 1000);
        CHECK(count("category = 'cuda_api' AND correlation_id IN (SELECT correlation_id FROM"
                    " event_view WHERE track_kind = 'gpu_stream' AND rank = " +
                    std::to_string(rank) + ")") == x.linkedLaunches);
        CHECK(q.scalar("SELECT world_size FROM process WHERE rank = " + std::to_string(rank)) ==
              128);
    }
    CHECK(q.scalar("SELECT COUNT(*) FROM event_arg WHERE key = 'copy_kind'") == 80);
    CHECK(q.scalar("SELECT MIN(ts) FROM event") == 0);
    // Tracks are sorted and nested: no event starts before its predecessor on its track.
    CHECK(q.scalar("SELECT COUNT(*) FROM event a JOIN event b ON b.id = a.id + 1"
                   " AND b.track_id = a.track_id WHERE b.ts < a.ts") == 0);
    CHECK(q.scalar("SELECT MAX(depth) FROM event_view WHERE track_kind = 'cpu_thread'") > 3);
}

TEST_CASE("the real traces' FP32 GEMMs are cuBLAS's sgemm kernels, not FBGEMM's embedding kernels",
          "[import][kineto][real][gemm]") {
    TempDir dir;
    const auto imported = test::importRealKineto(dir);
    if (!imported) return;
    // Per kernel name: the 68 kernels that are FP32 GEMMs on the CUDA cores are cuBLAS's
    // ampere_sgemm_* tiles and sgemm_largek_lds64. The TF32 tensor-core CUTLASS GEMMs
    // (tensorop_s1688gemm), cuBLAS's gemv/gemmk1 kernels of float and FBGEMM's embedding and FP8
    // kernels (which name "gemm" and "float": 54 of the 122 the old word match counted) are not;
    // the 616 CUTLASS kernels are TF32 on tensor cores, the 52 gemv/gemmk1 kernels other GEMMs.
    TraceQuery q(dir / "kineto.hpcprof");
    std::map<analyzer::GemmKind, int64_t> byKind;
    int64_t fbgemmFlagged = 0;
    for (const auto& row : q.rows("SELECT COUNT(*), name FROM event_view WHERE category ="
                                  " 'gpu_kernel' GROUP BY name")) {
        size_t bar = row.find('|');
        int64_t n = std::stoll(row.substr(0, bar));
        std::string name = row.substr(bar + 1);
        analyzer::GemmKind k = analyzer::gemmKindOf(name);
        byKind[k] += n;
        if (k == analyzer::GemmKind::Fp32Simt) {
            INFO(name);
            CHECK((name.rfind("ampere_sgemm_", 0) == 0 ||
                   name.rfind("void sgemm_largek_lds64<", 0) == 0));
        }
        if (name.find("fbgemm") != std::string::npos || name.find("split_embedding") == 5)
            fbgemmFlagged += k != analyzer::GemmKind::None;
    }
    CHECK(byKind[analyzer::GemmKind::Fp32Simt] == 68);
    CHECK(byKind[analyzer::GemmKind::TensorCore] == 616);
    CHECK(byKind[analyzer::GemmKind::Other] == 52);
    CHECK(fbgemmFlagged == 0);
    // The analysis counts the same kernels (the whole run is the window here).
    analyzer::AnalysisOptions opt;
    opt.window.kind = analyzer::WindowSpec::Kind::TimeRange;
    opt.window.begin = 0;
    opt.window.end = int64_t(1) << 61;
    auto trace = analyzer::Trace::open(dir / "kineto.hpcprof");
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeTrace(*trace, opt);
    REQUIRE(a.ok());
    int64_t kernels = 0, ns = 0;
    for (const auto& r : a->ranks) {
        kernels += r.facts.fp32GemmKernels;
        ns += r.facts.fp32GemmNs;
    }
    CHECK(kernels == 68);
    CHECK(ns == 12'437'000 + 12'454'000);
    // 5 % of the kernel time: below the rule's 10 %, so no fp32-gemm finding.
    for (const auto& f : a->findings) CHECK(f.id != "fp32-gemm");
}

TEST_CASE("the real traces' SendRecv kernels are matched across the two ranks and name the late one",
          "[import][kineto][real][waits]") {
    TempDir dir;
    const auto imported = test::importRealKineto(dir);
    if (!imported) return;
    // 10 ncclKernel_SendRecv kernels per rank; the sampled excerpt holds both sides of 5
    // exchanges only, which end within 0.4 ms of each other on the two ranks (the others have no
    // partner in the excerpt). Rank 1 starts last in all 5: rank 0 waits 31.865 ms in total
    // (e.g. 898.305 -> 903.164 ms in the first, 4.859 ms). SQL below recomputes it.
    auto trace = analyzer::Trace::open(dir / "kineto.hpcprof");
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeTrace(*trace);
    REQUIRE(a.ok());
    CHECK(a->waits.completeInstances == 5);
    CHECK(a->waits.collectiveWaitNs == 31'865'000);
    REQUIRE(a->waits.stragglers.size() == 1);
    CHECK(a->waits.stragglers[0].rank == 1);
    CHECK(a->waits.stragglers[0].timesLast == 5);
    // The same pairs by SQL: kernels of the two ranks ending within 1 ms; the wait is rank 0's
    // time from its start to rank 1's start, at most its kernel.
    TraceQuery q(dir / "kineto.hpcprof");
    CHECK(q.scalar("SELECT SUM(MAX(0, MIN(b.ts_ns, a.ts_ns + a.dur_ns) - a.ts_ns)) FROM event_view a"
                   " JOIN event_view b ON a.rank = 0 AND b.rank = 1 AND a.category = 'gpu_comm_kernel'"
                   " AND b.category = 'gpu_comm_kernel' AND ABS((a.ts_ns + a.dur_ns) - (b.ts_ns + b.dur_ns)) < 1000000") ==
          31'865'000);
    // Each step names rank 1.
    REQUIRE(a->steps.steps.size() == 2);
    for (const auto& st : a->steps.steps) CHECK(st.stragglerRank == 1);
}

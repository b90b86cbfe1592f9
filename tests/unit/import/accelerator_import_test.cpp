// SPDX-License-Identifier: MIT
// Kineto traces of accelerators other than CUDA (tests/data/accelerators: an MTIA rank and an XPU
// rank, hand-written in Kineto's layout): device events are analysed as device work, runtime
// calls as runtime calls, and the categories hpcprof does not analyse are named with their
// counts in the data quality instead of being taken for host computation; a real PyTorch
// execution trace (tests/data/torch) is refused with what to give instead.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/import/importer.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
using hpcprof::test::TempDir;
using hpcprof::test::TraceQuery;
using schema::Stat;

namespace {

const std::string kDataDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/accelerators";

const analyzer::DataWarning* warning(const analyzer::Analysis& a, const std::string& name) {
    for (const auto& w : a.warnings)
        if (w.name == name) return &w;
    return nullptr;
}

} // namespace

TEST_CASE("MTIA and XPU ranks import their device work onto device tracks",
          "[import][kineto][accelerator]") {
    TempDir dir;
    import::ImportOptions o;
    o.inputs = {kDataDir};
    o.output = dir / "accel.hpcprof";
    auto r = import::importTraces(o);
    REQUIRE(r.ok());
    CHECK(r->files == 2);
    CHECK(r->stats[size_t(Stat::ImportEventsNotAnalysed)] == 2);
    CHECK(r->statDetails[size_t(Stat::ImportEventsNotAnalysed)] ==
          "by category: mtia_insight 1, overhead 1");
    CHECK(r->stats[size_t(Stat::ImportUnknownCategories)] == 1);
    CHECK(r->statDetails[size_t(Stat::ImportUnknownCategories)] == "by category: app_phase 1");
    CHECK_FALSE(r->partial);

    TraceQuery q(dir / "accel.hpcprof");
    auto rows = [&](const std::string& where) {
        return q.rows("SELECT rank, track_kind, track, category, name FROM event_view WHERE " +
                      where + " ORDER BY rank, ts_ns");
    };
    CHECK(rows("track_kind = 'gpu_stream'") ==
          std::vector<std::string>{"0|gpu_stream|MTIA 1 stream 3|gpu_kernel|mm_kernel",
                                   "0|gpu_stream|MTIA 1 stream 3|gpu_kernel|add_kernel",
                                   "1|gpu_stream|GPU 1 stream 2|gpu_kernel|gemm_kernel",
                                   "1|gpu_stream|GPU 1 stream 2|gpu_memcpy|Memcpy M2D"});
    CHECK(rows("category = 'cuda_api'") ==
          std::vector<std::string>{"0|cpu_thread|main|cuda_api|mtiaLaunchKernel",
                                   "1|cpu_thread|thread 5151|cuda_api|urEnqueueKernelLaunch",
                                   "1|cpu_thread|thread 5151|cuda_api|zeCommandListAppendLaunchKernel"});
    // The launch and its kernel share the correlation id.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE correlation_id = 5") == 2);
    // Nothing of the not analysed categories, and the run is the steps' 1 ms, not 5 ms.
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE name IN ('insight window',"
                   " 'Instrumentation')") == 0);
    CHECK(q.scalar("SELECT MAX(ts_ns + dur_ns) - MIN(ts_ns) FROM event_view") == 1'000'000);
    // The trace's stats name the categories.
    CHECK(q.rows("SELECT value, description FROM stats WHERE name ="
                 " 'import_events_not_analysed'")[0]
              .find("2|events of profiler categories") == 0);
    CHECK(q.rows("SELECT description FROM stats WHERE name = 'import_events_not_analysed'")[0]
              .find("; by category: mtia_insight 1, overhead 1") != std::string::npos);
}

TEST_CASE("an MTIA rank is analysed as a device rank, not as 100 % host compute",
          "[import][kineto][accelerator]") {
    TempDir dir;
    import::ImportOptions o;
    o.inputs = {kDataDir};
    o.output = dir / "accel.hpcprof";
    REQUIRE(import::importTraces(o).ok());
    auto trace = analyzer::Trace::open(dir / "accel.hpcprof");
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeTrace(*trace);
    REQUIRE(a.ok());
    REQUIRE(a->ranks.size() == 2);
    CHECK(a->summary.gpuRankCount == 2);
    const auto& mtia = a->ranks[0];
    const auto& xpu = a->ranks[1];
    CHECK(mtia.gpu);
    CHECK(xpu.gpu);
    // Both steps run 1000 us; the MTIA device runs 300 us of kernels, the XPU 400 us of kernel
    // and 100 us of copy: the rest of the window is device idle.
    CHECK(mtia.windowNs == 1'000'000);
    CHECK(mtia.gpuIdleNs == 700'000);
    CHECK(xpu.gpuIdleNs == 500'000);
    CHECK(mtia.facts.kernels == 2);
    CHECK(mtia.facts.kernelNs == 300'000);
    // The data quality says what was not read, by name and count.
    const auto* notAnalysed = warning(*a, "import_events_not_analysed");
    REQUIRE(notAnalysed);
    CHECK(notAnalysed->count == 2);
    CHECK(notAnalysed->message.find("by category: mtia_insight 1, overhead 1") !=
          std::string::npos);
    const auto* unknown = warning(*a, "import_unknown_categories");
    REQUIRE(unknown);
    CHECK(unknown->count == 1);
    CHECK(unknown->message.find("app_phase 1") != std::string::npos);
}

TEST_CASE("a real PyTorch execution trace is refused, its profiler trace imported",
          "[import][kineto][torch]") {
    // tests/data/torch: written by torch 2.15 (see the README there).
    const std::string torchDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/torch";
    TempDir dir;
    import::ImportOptions o;
    o.inputs = {torchDir + "/execution_trace.json.gz"};
    o.output = dir / "et.hpcprof";
    auto refused = import::importTraces(o);
    REQUIRE_FALSE(refused.ok());
    INFO(refused.status().message());
    CHECK(refused.status().message().find("execution_trace.json.gz: not a trace: the file is a "
                                          "PyTorch execution trace") != std::string::npos);
    CHECK(refused.status().message().find("import the profiler's trace instead") !=
          std::string::npos);
    CHECK_FALSE(std::filesystem::exists(dir / "et.hpcprof"));

    o.inputs = {torchDir + "/profiler_trace_cpu.json"};
    o.output = dir / "cpu.hpcprof";
    auto r = import::importTraces(o);
    REQUIRE(r.ok());
    TraceQuery q(dir / "cpu.hpcprof");
    CHECK(q.rows("SELECT name FROM event_view WHERE name LIKE 'ProfilerStep#%' ORDER BY ts_ns") ==
          std::vector<std::string>{"ProfilerStep#1", "ProfilerStep#2"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_view WHERE category = 'cpu_op' AND name LIKE 'aten::%'") == 14);
    for (int64_t v : r->stats) CHECK(v == 0);
}

// SPDX-License-Identifier: MIT
// The gpu family's kernel statistics on a hand-built trace with known values: per-name count,
// total, mean, min, max and sample std; launch latency joined by correlation id (per name, per
// rank, job-wide, nearest-rank percentiles); the launch-queue depth; copies by direction; the
// kernel classes' busy time and overlaps. And the rule that shortens kernel names for tables.
#include <catch2/catch.hpp>

#include <cmath>

#include <nlohmann/json.hpp>

#include "families/gpu/gpu_section.hpp"
#include "hpcprof/report/kernel_names.hpp"
#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/report/writers.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/analysis_helpers.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

void launch(test::TraceBuilder& b, int track, int64_t ts, int64_t corr) {
    b.event(track, Category::CudaApi, "cudaLaunchKernel", ts, 10).correlationId = corr;
}

void kernel(test::TraceBuilder& b, int stream, Category c, const std::string& name, int64_t ts, int64_t dur,
            int64_t corr) {
    b.event(stream, c, name, ts, dur).correlationId = corr;
}

/// Rank 0: three "gemm_a" kernels and an NCCL kernel launched by calls (latencies 900, 900,
/// 1000, 1100), a kernel without a call, two copies and a set. Rank 1: a kernel 5000 ns after
/// its call and one that starts 10 ns before its call.
void buildTrace(const std::string& path) {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 10'000, 2);
    int s7 = b.gpuStream(r0, 0, 7), s2 = b.gpuStream(r0, 0, 2), s3 = b.gpuStream(r0, 0, 3);
    for (int64_t i = 1; i <= 5; ++i) launch(b, r0, 100 * i, i);
    kernel(b, s7, Category::GpuKernel, "gemm_a", 1000, 100, 1);
    kernel(b, s7, Category::GpuKernel, "gemm_a", 1100, 200, 2);
    kernel(b, s7, Category::GpuKernel, "gemm_a", 1300, 600, 3);
    kernel(b, s2, Category::GpuCommKernel, "ncclKernel_AllReduce", 1500, 1000, 4);
    kernel(b, s7, Category::GpuKernel, "lonely", 3000, 50, 99);
    b.event(s3, Category::GpuMemcpy, "memcpy HtoD", 1800, 500).withBytes(1000).withArg("copy_kind", "HtoD")
        .correlationId = 5;
    b.event(s2, Category::GpuMemcpy, "memcpy DtoH", 2200, 400).withBytes(200).withArg("copy_kind", "DtoH");
    b.event(s7, Category::GpuMemset, "memset", 4000, 10).withBytes(100);
    int r1 = b.rank(1, 0, 10'000, 2);
    int s1 = b.gpuStream(r1, 0, 7);
    launch(b, r1, 1000, 1);
    kernel(b, s1, Category::GpuKernel, "gemm_a", 6000, 300, 1);
    launch(b, r1, 8000, 2);
    kernel(b, s1, Category::GpuKernel, "late_call", 7990, 20, 2);
    b.write(path);
}

const KernelNameStats* findKernel(const GpuKernelRank& r, const std::string& name) {
    for (const auto& k : r.kernels)
        if (k.name == name) return &k;
    return nullptr;
}

} // namespace

/// The analysis of buildTrace()'s trace, with its gpu section's two ranks.
struct Analysed {
    Analysis a;
    const GpuSection* g = nullptr;
    Analysed() {
        test::TempDir dir;
        buildTrace(dir / "t.hpcprof");
        a = test::analyseFile(dir / "t.hpcprof");
        g = gpuSection(a);
        REQUIRE(g);
        REQUIRE(g->ranks.size() == 2);
        REQUIRE(g->ranks[0].rank == 0);
    }
};

TEST_CASE("kernel statistics per name and rank on known values", "[analyzer][gpu][kernels]") {
    Analysed x;
    const GpuKernelRank& r = x.g->ranks[0];

    // Per name: sorted by total time; gemm_a is 100 + 200 + 600.
    REQUIRE(r.kernels.size() == 3);
    CHECK(r.kernels[0].name == "ncclKernel_AllReduce");
    CHECK(r.kernels[0].cls == KernelClass::Communication);
    const KernelNameStats* gemm = findKernel(r, "gemm_a");
    REQUIRE(gemm);
    CHECK(gemm->cls == KernelClass::Compute);
    CHECK(gemm->count == 3);
    CHECK(gemm->totalNs == 900);
    CHECK(gemm->minNs == 100);
    CHECK(gemm->maxNs == 600);
    CHECK(gemm->meanNs == Approx(300.0));
    CHECK(gemm->stdNs == Approx(std::sqrt(140000.0 / 2))); // deviations -200, -100, 300
    CHECK(gemm->launch.count == 3);
    CHECK(gemm->launch.medianNs == 900); // nearest rank ceil(1.5) = 2 of {900, 900, 1000}
    CHECK(gemm->launch.p95Ns == 1000);
    CHECK(gemm->launch.maxNs == 1000);
    const KernelNameStats* lonely = findKernel(r, "lonely");
    REQUIRE(lonely);
    CHECK(lonely->launch.count == 0);
    CHECK(lonely->stdNs == 0);
}

TEST_CASE("launch latency joined by correlation id and the launch-queue depth on known values",
          "[analyzer][gpu][kernels]") {
    Analysed x;
    const GpuKernelRank& r = x.g->ranks[0];
    const GpuSection* g = x.g;
    // The rank's launches: {900, 900, 1000, 1100}; "lonely" has no call.
    CHECK(r.launch.count == 4);
    CHECK(r.launch.meanNs == Approx(975.0));
    CHECK(r.launch.medianNs == 900);
    CHECK(r.launch.p95Ns == 1100);
    CHECK(r.launch.maxNs == 1100);
    CHECK(r.launch.negative == 0);
    CHECK(r.unmatchedKernels == 1);

    // Queued over [100,1000) [200,1100) [300,1300) [400,1500): at most 4 at once, area 3900.
    CHECK(r.queue.max == 4);
    const int64_t windowNs = x.a.ranks[0].windowNs;
    REQUIRE(windowNs > 0);
    CHECK(r.queue.mean == Approx(3900.0 / double(windowNs)));
    REQUIRE(r.queue.meanSeries.size() == 60);
    int64_t seriesMax = 0;
    double area = 0;
    for (size_t k = 0; k < r.queue.meanSeries.size(); ++k) {
        seriesMax = std::max(seriesMax, r.queue.maxSeries[k]);
        area += r.queue.meanSeries[k] * double(r.queue.bucketNs); // the window has no holes
    }
    CHECK(seriesMax == 4);
    CHECK(area == Approx(3900.0).margin(double(r.queue.bucketNs)));

    // Rank 1: latencies {5000, -10}; job-wide {-10, 900, 900, 1000, 1100, 5000}.
    const GpuKernelRank& r1 = g->ranks[1];
    CHECK(r1.launch.count == 2);
    CHECK(r1.launch.negative == 1);
    CHECK(r1.queue.max == 1);
    CHECK(g->launch.count == 6);
    CHECK(g->launch.medianNs == 900);
    CHECK(g->launch.p95Ns == 5000);
    CHECK(g->launch.meanNs == Approx(8890.0 / 6));
    CHECK(g->launch.negative == 1);
}

TEST_CASE("copies by direction and the kernel classes' overlaps on known values", "[analyzer][gpu][kernels]") {
    Analysed x;
    const GpuKernelRank& r = x.g->ranks[0];
    // Copies by direction: bytes / ns = GB/s.
    REQUIRE(r.copies.size() == 3);
    CHECK(r.copies[0].direction == "DtoH");
    CHECK(r.copies[0].bytes == 200);
    CHECK(r.copies[0].gbPerS() == Approx(0.5));
    CHECK(r.copies[1].direction == "HtoD");
    CHECK(r.copies[1].gbPerS() == Approx(2.0));
    CHECK(r.copies[2].direction == "memset");
    CHECK(r.copies[2].count == 1);
    CHECK(r.copies[2].gbPerS() == Approx(10.0));

    // Classes: compute [1000,1900) + [3000,3050); communication [1500,2500); memory [1800,2600)
    // + [4000,4010).
    CHECK(r.classes[int(KernelClass::Compute)].count == 4);
    CHECK(r.classes[int(KernelClass::Compute)].totalNs == 950);
    CHECK(r.classes[int(KernelClass::Compute)].busyNs == 950);
    CHECK(r.classes[int(KernelClass::Communication)].busyNs == 1000);
    CHECK(r.classes[int(KernelClass::Memory)].count == 3);
    CHECK(r.classes[int(KernelClass::Memory)].totalNs == 910);
    CHECK(r.classes[int(KernelClass::Memory)].busyNs == 810);
    CHECK(r.commComputeOverlapNs == 400);
    CHECK(r.memoryComputeOverlapNs == 100);
    CHECK(r.commMemoryOverlapNs == 700);
    REQUIRE(x.g->copies.size() == 3); // rank 1 has none: the job's are rank 0's
    CHECK(x.g->copies[1].bytes == 1000);
}

TEST_CASE("the kernel section in the text, markdown, HTML and JSON reports", "[analyzer][gpu][kernels]") {
    test::TempDir dir;
    buildTrace(dir / "t.hpcprof");
    Analysis a = test::analyseFile(dir / "t.hpcprof");
    const std::string text = report::writeReport(report::Format::Text, a, {});
    CHECK(text.find("Kernels of rank 0 by total time") != std::string::npos);
    CHECK(text.find("ncclKernel_AllReduce") != std::string::npos);
    const std::string md = report::writeReport(report::Format::Markdown, a, {});
    CHECK(md.find("### GPU copies and sets by direction") != std::string::npos);
    const std::string html = report::writeReport(report::Format::Html, a, {});
    CHECK(html.find("aria-label=\"launch queue depth over time\"") != std::string::npos);
    CHECK(html.find("<script") == std::string::npos);
    auto doc = nlohmann::json::parse(report::writeReport(report::Format::Json, a, {}));
    REQUIRE(doc.contains("gpu"));
    CHECK(doc["gpu"]["launch_latency"]["p95_ns"] == 5000);
    CHECK(doc["gpu"]["ranks"][0]["kernels"][0]["name"] == "ncclKernel_AllReduce");
    CHECK(doc["gpu"]["ranks"][0]["overlap"]["comm_compute_ns"] == 400);
    CHECK(doc["gpu"]["ranks"][0]["overlap"]["comm_compute_pct"] == Approx(40.0));
}

TEST_CASE("the reports' top kernels show short names, the JSON the full ones", "[analyzer][gpu][kernels]") {
    // Two kernels that differ only inside a long name (weighted / unweighted) stay apart.
    const std::string args = "<c10::Half, float, c10::Half, 2ul, 32>(at::GenericPackedTensorAccessor<float, 2ul, "
                             "at::RestrictPtrTraits, long>, float, float, long)";
    const std::string unweighted = "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel" + args;
    const std::string weighted = "void split_embedding_backward_codegen_rowwise_adagrad_weighted_kernel" + args;
    test::TempDir dir;
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 10'000, 1);
    int s7 = b.gpuStream(r0, 0, 7);
    launch(b, r0, 100, 1);
    kernel(b, s7, Category::GpuKernel, unweighted, 1000, 300, 1);
    launch(b, r0, 200, 2);
    kernel(b, s7, Category::GpuKernel, weighted, 2000, 100, 2);
    b.write(dir / "t.hpcprof");
    Analysis a = test::analyseFile(dir / "t.hpcprof");
    const std::string text = report::writeReport(report::Format::Text, a, {});
    CHECK(text.find("split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel<...>\n") != std::string::npos);
    CHECK(text.find("split_embedding_backward_codegen_rowwise_adagrad_weighted_kernel<...>\n") != std::string::npos);
    for (auto f : {report::Format::Text, report::Format::Markdown, report::Format::Html}) // escaped there
        CHECK(report::writeReport(f, a, {}).find("GenericPackedTensorAccessor") == std::string::npos);
    auto doc = nlohmann::json::parse(report::writeReport(report::Format::Json, a, {}));
    REQUIRE(doc["top"]["kernels"].size() == 2);
    CHECK(doc["top"]["kernels"][0]["name"] == unweighted);
}

TEST_CASE("a trace without GPU work has no kernel section", "[analyzer][gpu][kernels]") {
    test::TraceBuilder b;
    int r0 = b.rank(0, 0, 1000, 1);
    b.event(r0, Category::UserRange, "work", 0, 500);
    test::TempDir dir;
    b.write(dir / "t.hpcprof");
    Analysis a = test::analyseFile(dir / "t.hpcprof");
    CHECK(gpuSection(a) == nullptr);
}

TEST_CASE("kernel names are shortened for tables by a fixed rule", "[analyzer][gpu][kernels]") {
    // 1-2: no "void ", no parameter list.
    CHECK(shortKernelName("void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int*)") ==
          "fbgemm_gpu::permute_2D_lengths_kernel<int>");
    CHECK(shortKernelName("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)") ==
          "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t");
    CHECK(shortKernelName("Memcpy DtoD") == "Memcpy DtoD");
    // 3: template arguments folded when still too long, parentheses inside them included.
    CHECK(shortKernelName("void at::native::(anonymous namespace)::reduce_kernel<512, 1, at::native::ReduceOp<float,"
                          " (anonymous namespace)::MeanOps<float, float> > >(at::native::ReduceOp<float>)") ==
          "at::native::(anonymous namespace)::reduce_kernel<...>");
    // 4: the middle cut out when folding is not enough (31 + "..." + 30 characters).
    const std::string longName =
        "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<c10::Half, float>"
        "(at::GenericPackedTensorAccessor<float, 2ul>)";
    const std::string s = shortKernelName(longName);
    CHECK(s.size() == kShortKernelNameMax);
    CHECK(s == "split_embedding_backward_codege...hted_kernel_cta_per_row_1<...>");
    // Unbalanced brackets (an operator name): only "void " and the cut apply.
    CHECK(shortKernelName("void operator<(int)", 64) == "operator<(int)");
    CHECK(shortKernelName("void operator<(int)", 10) == "oper...nt)");
}

TEST_CASE("a table's short kernel names stay apart when the full names differ", "[analyzer][gpu][kernels]") {
    // Two FBGEMM kernels of the real Kineto traces (tests/data/kineto): alike at 64 characters.
    const std::string weighted = "void split_embedding_backward_codegen_rowwise_adagrad_weighted_kernel_cta_per_row_1"
                                 "<c10::Half, float, c10::Half, 2ul, 32>(at::GenericPackedTensorAccessor<float, 2ul>)";
    const std::string unweighted = "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1"
                                   "<c10::Half, float, c10::Half, 2ul, 32>(at::GenericPackedTensorAccessor<float, 2ul>)";
    REQUIRE(shortKernelName(weighted) == shortKernelName(unweighted));
    const std::vector<std::string_view> names{weighted, "Memcpy DtoD", unweighted, weighted};
    const std::vector<std::string> s = shortKernelNames(names);
    // Shortened again with 16 more characters: the middle that tells them apart shows.
    CHECK(s[0] == "split_embedding_backward_codegen_rowwis...rad_weighted_kernel_cta_per_row_1<...>");
    CHECK(s[1] == "Memcpy DtoD");
    CHECK(s[2] == "split_embedding_backward_codegen_rowwis...d_unweighted_kernel_cta_per_row_1<...>");
    CHECK(s[3] == s[0]); // the same kernel keeps one name
    // Alike up to 4 x 64 characters: numbered in the order given.
    const std::string args(300, 'x');
    const std::string a = "k<" + args + "1>", b = "k<" + args + "2>", c = "k<" + args + "3>";
    const std::vector<std::string> n = shortKernelNames({a, b, a, c});
    CHECK(n[0] == "k<...>");
    CHECK(n[1] == "k<...> #2");
    CHECK(n[2] == "k<...>");
    CHECK(n[3] == "k<...> #3");
}

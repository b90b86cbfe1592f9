// SPDX-License-Identifier: MIT
// The diff of two training runs (issue 20, point 6): every kernel is compared (not the top lists),
// and when both runs mark steps the same way the rows are per step, so a run with twice the steps
// is not a regression while a kernel that got slower per step is.
#include <catch2/catch.hpp>

#include <string>

#include "hpcprof/analyzer/diff.hpp"
#include "tests/unit/analyzer/analysis_helpers.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {

constexpr int64_t kStep = 1'000'000; // 1 ms
constexpr int kKernels = 12;         // more than the report's top list (10)

/// One GPU rank, `steps` ProfilerStep ranges of 1 ms; in each step kernels k00..k11 run back to
/// back, k<i> lasting (12 - i) x 10 us, except k11 which lasts `k11Ns`.
void buildRun(test::TraceBuilder& b, int steps, int64_t k11Ns) {
    int t = b.rank(0, 0, steps * kStep, 1);
    int g = b.gpuStream(t, 0, 7);
    for (int s = 0; s < steps; ++s) {
        const int64_t begin = s * kStep;
        b.event(t, Category::UserRange, "ProfilerStep#" + std::to_string(s), begin, kStep);
        int64_t ts = begin;
        for (int k = 0; k < kKernels; ++k) {
            const int64_t dur = k == kKernels - 1 ? k11Ns : (kKernels - k) * 10'000;
            b.event(g, Category::GpuKernel, "k" + std::string(k < 10 ? "0" : "") + std::to_string(k), ts, dur);
            ts += dur;
        }
    }
}

const DiffRow* rowOf(const AnalysisDiff& d, const std::string& scope, const std::string& name) {
    for (const auto& r : d.rows)
        if (r.scope == scope && r.name == name) return &r;
    return nullptr;
}

} // namespace

TEST_CASE("a diff of runs with steps is per step, over every kernel", "[analyzer][diff]") {
    Analysis base = test::analyseBuilt([](test::TraceBuilder& b) { buildRun(b, 4, 10'000); });
    Analysis more = test::analyseBuilt([](test::TraceBuilder& b) { buildRun(b, 8, 10'000); });
    Analysis slower = test::analyseBuilt([](test::TraceBuilder& b) { buildRun(b, 8, 30'000); });
    REQUIRE(base.steps.steps.size() == 4);
    REQUIRE(more.steps.steps.size() == 8);
    REQUIRE(base.topKernels.size() < size_t(kKernels)); // k11 is not in the top list
    REQUIRE(base.kernels.size() == size_t(kKernels));
    DiffOptions o;
    o.minChangeNs = 1000;

    // Twice the steps, the same work per step: nothing changed.
    AnalysisDiff same = diffAnalyses(base, more, o);
    CHECK(same.perStep);
    CHECK(same.regressions == 0);
    CHECK(same.improvements == 0);
    const DiffRow* wall = rowOf(same, "summary", "wall_ns");
    REQUIRE(wall);
    CHECK(wall->next == 2 * wall->base); // shown, not judged
    CHECK(wall->verdict == DiffVerdict::Same);
    const DiffRow* k11 = rowOf(same, "kernel", "k11");
    REQUIRE(k11);
    CHECK(k11->base == 10'000);
    CHECK(k11->next == 10'000);

    // k11 three times as long per step (+20 us per step, above the floor of 1 % of a step):
    // exactly that regression, and the step time unchanged (the ranges are fixed).
    AnalysisDiff worse = diffAnalyses(base, slower, o);
    k11 = rowOf(worse, "kernel", "k11");
    REQUIRE(k11);
    CHECK(k11->base == 10'000);
    CHECK(k11->next == 30'000);
    CHECK(k11->verdict == DiffVerdict::Regression);
    for (const auto& r : worse.rows)
        if (r.scope == "kernel" && r.name != "k11") CHECK(r.verdict == DiffVerdict::Same);
    CHECK(rowOf(worse, "summary", "step_ns")->verdict == DiffVerdict::Same);
}

TEST_CASE("runs without the same kind of steps are compared as whole runs", "[analyzer][diff]") {
    Analysis base = test::analyseBuilt([](test::TraceBuilder& b) { buildRun(b, 4, 10'000); });
    Analysis plain = test::analyseBuilt([](test::TraceBuilder& b) {
        int t = b.rank(0, 0, 4 * kStep, 1);
        int g = b.gpuStream(t, 0, 7);
        b.event(g, Category::GpuKernel, "k00", 0, 120'000);
    });
    AnalysisDiff d = diffAnalyses(base, plain);
    CHECK_FALSE(d.perStep);
    CHECK(rowOf(d, "summary", "step_ns") == nullptr);
    REQUIRE(rowOf(d, "kernel", "k00"));
    CHECK(rowOf(d, "kernel", "k00")->base == 4 * 120'000);
}

// SPDX-License-Identifier: MIT
// Steps and the default window of imported PyTorch profiler (Kineto) traces: synthetic traces
// with known steps (tests/data/kineto_steps, made by make_steps.py there, which states every
// number asserted here) and the real traces of tests/data/kineto.
#include <catch2/catch.hpp>
#include <filesystem>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/import/importer.hpp"
#include "process_runner.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using hpcprof::test::TempDir;

namespace {

const std::string kStepsDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto_steps";
const std::string kRealDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto";
constexpr int64_t kMs = 1'000'000;

std::string importDir(const std::vector<std::string>& inputs, const TempDir& dir) {
    import::ImportOptions o;
    o.inputs.assign(inputs.begin(), inputs.end());
    o.output = dir / "t.hpcprof";
    auto r = import::importTraces(o);
    INFO(r.status().message());
    REQUIRE(r.ok());
    return o.output;
}

Analysis analyze(const std::string& path, const std::string& window = "", const std::string& steps = "") {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    AnalysisOptions o;
    auto w = parseWindow(window);
    REQUIRE(w.ok());
    o.window = *w;
    o.steps = steps;
    auto a = analyzeTrace(*trace, o);
    INFO(a.status().message());
    REQUIRE(a.ok());
    return std::move(a.value());
}

std::vector<std::string> syntheticRanks() {
    return {kStepsDir + "/steps_rank0.json", kStepsDir + "/steps_rank1.json", kStepsDir + "/steps_rank2.json"};
}

} // namespace

TEST_CASE("ProfilerStep is the step family: not the Optimizer.step ranges with more instances, "
          "nor its GPU-side copies; the window is the steps",
          "[import][kineto][steps]") {
    TempDir dir;
    const std::string trace = importDir(syntheticRanks(), dir);
    Analysis a = analyze(trace);
    CHECK(a.steps.source == "range:ProfilerStep#");
    CHECK(a.steps.basis == "profiler_step");
    CHECK(a.steps.reason == "ProfilerStep (profiler steps)");
    // 5 steps (the 5 GPU copies on the stream add none); each as long as the slowest rank (2).
    REQUIRE(a.steps.steps.size() == 5);
    for (int k = 0; k < 5; ++k) {
        CHECK(a.steps.steps[size_t(k)].durNs == (10 * (k + 1) + 2) * kMs);
        CHECK(a.steps.steps[size_t(k)].spreadNs == 2 * kMs);
    }
    // Step-time variance per rank: 10..50 ms + r ms: mean 30 + r ms, stddev sqrt(200) ms.
    REQUIRE(a.steps.ranks.size() == 3);
    for (int r = 0; r < 3; ++r) {
        const RankSteps& rs = a.steps.ranks[size_t(r)];
        CHECK(rs.rank == r);
        REQUIRE(rs.steps.size() == 5);
        CHECK(rs.meanNs == (30 + r) * kMs);
        CHECK(rs.minNs == (10 + r) * kMs);
        CHECK(rs.maxNs == (50 + r) * kMs);
        CHECK(rs.stddevNs == 14'142'136); // sqrt(200) ms
        for (int k = 0; k < 5; ++k) { // one 5 ms kernel per step; the rest the GPU idles
            const RankStep& st = rs.steps[size_t(k)];
            REQUIRE(st.hasBreakdown);
            CHECK(st.durNs() == (10 * (k + 1) + r) * kMs);
            CHECK(st.exclusive[int(TimeClass::Compute)] == 5 * kMs);
            CHECK(st.exclusive[int(TimeClass::Idle)] == st.durNs() - 5 * kMs);
            CHECK(st.gpuIdleNs == st.durNs() - 5 * kMs);
        }
    }
    // The window: first step's begin to the last step's end over the ranks, job-wide; the
    // warm-up cpu_op at 0.5 s and the profiler's 2 s span are outside.
    CHECK(a.windowChoice.basis == "steps");
    CHECK(a.windowChoice.firstStep == 0);
    CHECK(a.windowChoice.lastStep == 4);
    CHECK(a.windowChoice.recordedEnd - a.windowChoice.recordedBegin == 2000 * kMs);
    CHECK(a.summary.windowBegin == 1000 * kMs);
    CHECK(a.summary.wallNs == 160 * kMs);
    for (const auto& r : a.ranks) CHECK(r.windowNs == 160 * kMs);
    // Rank 0's steps end 10 ms before rank 2's: that is idle of the job's window for it.
    CHECK(a.ranks[0].gpuIdleNs == 160 * kMs - 25 * kMs);
}

TEST_CASE("the steps option chooses the family, window all the whole span, and without steps the "
          "window is the first to last activity", "[import][kineto][steps]") {
    TempDir dir;
    const std::string trace = importDir(syntheticRanks(), dir);
    Analysis opt = analyze(trace, "", "Optimizer.step#SGD.step");
    CHECK(opt.steps.basis == "option");
    CHECK(opt.steps.steps.size() == 10);
    // --steps makes the chosen family the window: from its first range (100 us into step 5).
    CHECK(opt.windowChoice.basis == "steps");
    CHECK(opt.summary.windowBegin == 1000 * kMs + 100'000);
    CHECK(analyze(trace, "", "ProfilerStep").steps.steps.size() == 5);
    CHECK(analyze(trace, "", "ProfilerStep#").steps.steps.size() == 5);
    CHECK(analyze(trace, "", "Optimizer*").steps.steps.size() == 10);
    {
        auto t = Trace::open(trace);
        REQUIRE(t.ok());
        AnalysisOptions o;
        o.steps = "NoSuchStep";
        auto bad = analyzeTrace(*t, o);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.status().message().find("'ProfilerStep#'") != std::string::npos);
    }
    Analysis all = analyze(trace, "all");
    CHECK(all.windowChoice.basis == "whole");
    CHECK(all.summary.wallNs == 2000 * kMs);
    CHECK(all.steps.steps.size() == 5);
    // No steps (the collective pattern finds none): from the warm-up cpu_op at 500 ms to the
    // end of rank 2's last step at 1160 ms; the profiler's own span is no activity.
    Analysis none = analyze(trace, "", "collectives");
    CHECK(none.steps.steps.empty());
    CHECK(none.windowChoice.basis == "activity");
    CHECK(none.summary.windowBegin == 500 * kMs);
    CHECK(none.summary.wallNs == 660 * kMs);
    // T0:T1 still works; the steps are the ranges inside it.
    Analysis part = analyze(trace, "1000ms:1030ms");
    CHECK(part.windowChoice.basis == "time");
    CHECK(part.summary.wallNs == 30 * kMs);
    CHECK(part.steps.steps.size() == 2);
}

TEST_CASE("the real Kineto traces: ProfilerStep 551-552 are the steps and the window",
          "[import][kineto][steps][real]") {
    if (!std::filesystem::exists(kRealDir + "/sampled_rank-0.json.gz")) {
        WARN("SKIPPED: " << kRealDir << " is not there");
        return;
    }
    TempDir dir;
    const std::string trace = importDir({kRealDir}, dir);
    Analysis a = analyze(trace);
    // Three families of 2 ranges per rank (ProfilerStep#, Optimizer.step#Shampoo.step,
    // Optimizer.step#EMAOptimizer.step): the profiler's steps win, not the name order.
    CHECK(a.steps.basis == "profiler_step");
    REQUIRE(a.steps.steps.size() == 2);
    CHECK(a.steps.steps[0].durNs == 607'904'000); // rank 1's ProfilerStep#551
    CHECK(a.steps.steps[1].durNs == 630'639'000); // rank 1's ProfilerStep#552
    REQUIRE(a.steps.ranks.size() == 2);
    CHECK(a.steps.ranks[0].steps[0].durNs() == 607'312'000);
    CHECK(a.steps.ranks[0].steps[1].durNs() == 622'928'000);
    // Window: rank 0's first step begin to rank 1's last step end, of 3.37 s recorded.
    CHECK(a.windowChoice.basis == "steps");
    CHECK(a.summary.windowBegin == 852'545'000);
    CHECK(a.summary.windowEnd == 2'091'330'000);
    CHECK(a.windowChoice.recordedEnd - a.windowChoice.recordedBegin == 3'367'344'000);
    // The GPUs idle 54.5 % of the steps (83.3 % of the whole span).
    const double idle = double(a.ranks[0].gpuIdleNs + a.ranks[1].gpuIdleNs) /
                        double(a.ranks[0].windowNs + a.ranks[1].windowNs);
    CHECK(idle == Approx(0.5448).margin(0.0005));
    Analysis all = analyze(trace, "all");
    const double idleAll = double(all.ranks[0].gpuIdleNs + all.ranks[1].gpuIdleNs) /
                           double(all.ranks[0].windowNs + all.ranks[1].windowNs);
    CHECK(idleAll == Approx(0.8325).margin(0.0005));
    // Each step's classes add up to the step (inside the window).
    for (const RankSteps& rs : a.steps.ranks)
        for (const RankStep& st : rs.steps) {
            int64_t sum = 0;
            for (int c = 0; c < kTimeClassCount; ++c) sum += st.exclusive[c];
            CHECK(sum == st.durNs());
        }
}

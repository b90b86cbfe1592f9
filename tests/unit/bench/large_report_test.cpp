// SPDX-License-Identifier: MIT
// Reports of a 64-rank job (bench/scale/jobgen): the text, markdown and HTML rank tables list the
// ranks with the most and least compute and the outliers and say how many rows they leave out;
// JSON keeps every rank and is the same text as the whole document dumped at once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <regex>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/report/report_json.hpp"
#include "hpcprof/report/writers.hpp"
#include "job_model.hpp"
#include "process_runner.hpp"
#include "trace_sink.hpp"

using namespace hpcprof;
using namespace hpcprof::bench::jobgen;

namespace {

analyzer::Analysis job64(test::TempDir& dir, JobSpec& spec) {
    spec.ranks = 64;
    spec.eventsPerRank = 400;
    spec.seed = 11;
    REQUIRE(writeTrace(spec, dir / "job.hpcprof").ok());
    auto trace = analyzer::Trace::open(dir / "job.hpcprof");
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeTrace(*trace, {});
    REQUIRE(a.ok());
    return std::move(*a);
}

/// The ranks of the text report's rank table (the lines after its header up to a blank line).
std::vector<int64_t> textTableRanks(const std::string& text) {
    std::vector<int64_t> ranks;
    const size_t head = text.find("   rank    compute");
    REQUIRE(head != std::string::npos);
    std::regex row(R"(^\s+(\d+)\s+\S+ \S+\s)");
    size_t pos = text.find('\n', head) + 1;
    while (pos < text.size() && text[pos] != '\n') {
        const size_t end = text.find('\n', pos);
        const std::string line = text.substr(pos, end - pos);
        std::smatch m;
        if (std::regex_search(line, m, row)) ranks.push_back(std::stoll(m[1]));
        pos = end + 1;
    }
    return ranks;
}

} // namespace

TEST_CASE("rank tables of a 64-rank job are summarised in text, markdown and HTML", "[bench][report]") {
    test::TempDir dir;
    JobSpec spec;
    const analyzer::Analysis a = job64(dir, spec);
    const std::string text = report::writeReport(report::Format::Text, a, {});
    const std::vector<int64_t> shown = textTableRanks(text);
    // The 5 ranks with the most and the 5 with the least compute, and the straggler (most compute).
    std::vector<std::pair<int64_t, int64_t>> byCompute;
    for (const auto& r : a.ranks) byCompute.push_back({r.ns(analyzer::TimeClass::Compute), r.rank});
    std::stable_sort(byCompute.begin(), byCompute.end(), [](auto x, auto y) { return x.first > y.first; });
    for (size_t i = 0; i < 5; ++i) {
        CHECK(std::count(shown.begin(), shown.end(), byCompute[i].second) == 1);
        CHECK(std::count(shown.begin(), shown.end(), byCompute[byCompute.size() - 1 - i].second) == 1);
    }
    CHECK(byCompute.front().second == spec.stragglerRank());
    CHECK(shown.size() >= 10);
    CHECK(shown.size() < 64);
    CHECK(std::is_sorted(shown.begin(), shown.end()));
    const std::string omitted = std::to_string(64 - shown.size()) + " rows left out";
    CHECK(text.find(std::to_string(shown.size()) + " of 64 rows") != std::string::npos);
    CHECK(text.find(omitted) != std::string::npos);
    CHECK(text.find("more ranks made others wait less") != std::string::npos);
    CHECK(report::writeReport(report::Format::Markdown, a, {}).find(omitted) != std::string::npos);
    CHECK(report::writeReport(report::Format::Html, a, {}).find(omitted) != std::string::npos);
    // JSON: every rank, every straggler, every rank's steps.
    const auto json = nlohmann::json::parse(report::writeReport(report::Format::Json, a, {}));
    CHECK(json["ranks"].size() == 64);
    CHECK(json["stragglers"].size() == a.waits.stragglers.size());
    CHECK(json["steps"]["ranks"].size() == 64);
}

TEST_CASE("the JSON report written item by item equals the whole document dumped", "[bench][report]") {
    test::TempDir dir;
    JobSpec spec;
    const analyzer::Analysis a = job64(dir, spec);
    REQUIRE(a.steps.ranks.size() == 64);
    REQUIRE(a.steps.ranks[0].steps.size() > 50);
    report::WriterOptions o;
    o.hpcprofVersion = "test 1.0";
    nlohmann::json doc = report::reportJson(a);
    report::addGates(doc, {});
    doc["hpcprof_version"] = "test 1.0";
    CHECK(report::writeReport(report::Format::Json, a, {}, o) == doc.dump(2) + "\n");
}

namespace {

/// jobgen's 64-rank job analysed with every rank's steps listed, and held to 1,000 rank-steps
/// with each rank's 3 slowest listed.
std::pair<analyzer::Analysis, analyzer::Analysis> wholeAndCut(test::TempDir& dir) {
    JobSpec spec;
    const analyzer::Analysis plain = job64(dir, spec);
    (void)plain;
    auto trace = analyzer::Trace::open(dir / "job.hpcprof");
    REQUIRE(trace.ok());
    analyzer::AnalysisOptions all;
    all.maxRankStepItems = SIZE_MAX;
    auto whole = analyzer::analyzeTrace(*trace, all);
    REQUIRE(whole.ok());
    analyzer::AnalysisOptions few;
    few.maxRankStepItems = 1000;
    few.slowestRankSteps = 3;
    auto cut = analyzer::analyzeTrace(*trace, few);
    REQUIRE(cut.ok());
    return {std::move(*whole), std::move(*cut)};
}

/// `a`'s 3 slowest steps (of equal durations the earlier), by index.
std::vector<analyzer::RankStep> slowest3(const analyzer::RankSteps& a) {
    std::vector<analyzer::RankStep> slowest = a.steps;
    std::stable_sort(slowest.begin(), slowest.end(), [](const auto& x, const auto& y) { return x.durNs() > y.durNs(); });
    slowest.resize(3);
    std::sort(slowest.begin(), slowest.end(), [](const auto& x, const auto& y) { return x.index < y.index; });
    return slowest;
}

} // namespace

TEST_CASE("beyond the rank-step limit each rank lists its slowest steps, with the same statistics", "[bench][report]") {
    test::TempDir dir;
    const auto [whole, cut] = wholeAndCut(dir);
    const analyzer::StepStats &w = whole.steps, &c = cut.steps;
    REQUIRE(w.ranks.size() == 64);
    REQUIRE(w.slowestPerRank == 0);
    CHECK(c.slowestPerRank == 3);
    CHECK(c.rankSteps == w.rankSteps);
    CHECK(c.rankSteps > 1000);
    CHECK(c.rankStepLimit == 1000);
    // The job's steps and every rank's statistics are those of all steps.
    REQUIRE(c.steps.size() == w.steps.size());
    for (size_t i = 0; i < c.steps.size(); ++i) {
        CHECK(c.steps[i].begin == w.steps[i].begin);
        CHECK(c.steps[i].durNs == w.steps[i].durNs);
        CHECK(c.steps[i].spreadNs == w.steps[i].spreadNs);
    }
    CHECK(c.meanNs == w.meanNs);
    CHECK(c.cv == w.cv);
    REQUIRE(c.ranks.size() == w.ranks.size());
    for (size_t k = 0; k < c.ranks.size(); ++k) {
        const analyzer::RankSteps &a = w.ranks[k], &b = c.ranks[k];
        CHECK(b.rank == a.rank);
        CHECK(b.count == int64_t(a.steps.size()));
        CHECK(b.count == a.count);
        CHECK(b.meanNs == a.meanNs);
        CHECK(b.stddevNs == a.stddevNs);
        CHECK(b.minNs == a.minNs);
        CHECK(b.maxNs == a.maxNs);
        const std::vector<analyzer::RankStep> slowest = slowest3(a);
        REQUIRE(b.steps.size() == 3);
        for (size_t i = 0; i < 3; ++i) {
            CHECK(b.steps[i].index == slowest[i].index);
            CHECK(b.steps[i].begin == a.steps[size_t(slowest[i].index)].begin);
            CHECK(b.steps[i].durNs() == slowest[i].durNs());
        }
    }
    // The wait states do not depend on it.
    CHECK(cut.waits.collectiveWaitNs == whole.waits.collectiveWaitNs);
}

TEST_CASE("the JSON report says when the ranks list only their slowest steps", "[bench][report]") {
    test::TempDir dir;
    const auto [whole, cut] = wholeAndCut(dir);
    const analyzer::StepStats& c = cut.steps;
    const auto json = nlohmann::json::parse(report::writeReport(report::Format::Json, cut, {}));
    const auto& r0 = json["steps"]["ranks"][0];
    CHECK(r0["count"] == c.ranks[0].count);
    REQUIRE(r0["items"].size() == 3);
    CHECK(r0["items"][1]["index"] == c.ranks[0].steps[1].index);
    CHECK(json["steps"]["rank_items"] ==
          nlohmann::json({{"kept", "slowest"}, {"per_rank", 3}, {"rank_steps", c.rankSteps}, {"limit", 1000}}));
    const auto full = nlohmann::json::parse(report::writeReport(report::Format::Json, whole, {}));
    CHECK(!full["steps"].contains("rank_items"));
    CHECK(full["steps"]["ranks"][0]["items"].size() == size_t(whole.steps.ranks[0].count));
}

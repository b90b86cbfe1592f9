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

// SPDX-License-Identifier: MIT
// Small things every report format must get right (issue 19, point 8): a straggler of a
// point-to-point-only program is not "last in 0 of 0 collectives", and every text format ends
// its last line.
#include <catch2/catch.hpp>

#include "hpcprof/report/writers.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;

namespace {

/// Two ranks; rank 1 was late in messages only (no collective at all), rank 0 in collectives.
Analysis lateAnalysis(bool withCollectives) {
    Analysis a;
    a.tracePath = "t.hpcprof";
    for (int64_t r = 0; r < 2; ++r) {
        RankBreakdown b;
        b.rank = r;
        b.windowNs = 1'000'000;
        b.exclusive[int(TimeClass::Compute)] = 1'000'000;
        a.ranks.push_back(b);
    }
    Straggler p2p;
    p2p.rank = 1;
    p2p.inflictedWaitNs = 244'000'000;
    a.waits.stragglers.push_back(p2p);
    if (withCollectives) {
        Straggler coll;
        coll.rank = 0;
        coll.timesLast = 3;
        coll.instances = 7;
        coll.inflictedWaitNs = 5'000'000;
        a.waits.stragglers.push_back(coll);
    }
    return a;
}

} // namespace

TEST_CASE("a straggler that took part in no collective is not 'last in 0 of 0'", "[report][stragglers]") {
    const Analysis a = lateAnalysis(true);
    for (report::Format f : {report::Format::Text, report::Format::Markdown, report::Format::Html}) {
        const std::string out = report::writeReport(f, a, {});
        INFO(out);
        CHECK(out.find("0 of 0") == std::string::npos);
        CHECK(out.find("3 of 7") != std::string::npos); // the collective straggler keeps its count
    }
    const std::string text = report::writeReport(report::Format::Text, a, {});
    CHECK(text.find("rank 1     others waited 244 ms in total") != std::string::npos);
    CHECK(text.find("rank 0     last in 3 of 7 collectives, others waited") != std::string::npos);
}

TEST_CASE("every report and diff format ends its last line", "[report]") {
    const Analysis a = lateAnalysis(false);
    AnalysisDiff d;
    d.basePath = "a.hpcprof";
    d.newPath = "b.hpcprof";
    for (report::Format f : {report::Format::Text, report::Format::Markdown, report::Format::Html,
                             report::Format::Json, report::Format::Junit}) {
        for (const std::string& out : {report::writeReport(f, a, {}), report::writeDiff(f, d, {})}) {
            INFO(out);
            REQUIRE(!out.empty());
            CHECK(out.back() == '\n');
        }
    }
}

TEST_CASE("durations and counts of a 1,024-rank job read as numbers, not in e-notation", "[report]") {
    using hpcprof::report::formatDuration;
    using hpcprof::report::formatNumber;
    CHECK(formatDuration(2.62e12) == "2620 s"); // the sum of 1,024 ranks' waits
    CHECK(formatDuration(-1.5e12) == "-1500 s");
    CHECK(formatDuration(999.6e9) == "1000 s");
    CHECK(formatDuration(999.4e9) == "999 s");
    CHECK(formatDuration(8.08e9) == "8.08 s");
    CHECK(formatDuration(45.6e6) == "45.6 ms");
    CHECK(formatDuration(12) == "12 ns");
    CHECK(formatNumber(12499) == "12499"); // times last in a collective
    CHECK(formatNumber(1436000000) == "1436000000");
    CHECK(formatNumber(0.6937) == "0.6937");
    CHECK(formatNumber(-3) == "-3");
    CHECK(formatNumber(2.5e20) == "2.5e+20");
}

TEST_CASE("the findings' total gain names the span it is a share of, not the whole run's", "[report]") {
    // An MPI job: the header shows the whole run (722 ms), POP's runtime and the gains are
    // measured between MPI_Init and MPI_Finalize (316 ms).
    Analysis a = lateAnalysis(false);
    a.summary.wallNs = 722'000'000;
    a.windowChoice.basis = "whole";
    a.pop.region = "init_to_finalize";
    a.pop.runtimeNs = 316'000'000;
    Finding f;
    f.id = "load-imbalance";
    f.title = "Computation is unevenly distributed across ranks";
    f.estimatedGainNs = f.exclusiveGainNs = 191'000'000;
    a.findings.push_back(f);
    a.findingsGainNs = 191'000'000;
    const std::string text = report::writeReport(report::Format::Text, a, {});
    INFO(text);
    CHECK(text.find("whole run (722 ms)") != std::string::npos);
    CHECK(text.find("could save up to 191 ms of the 316 ms between MPI_Init and MPI_Finalize (") != std::string::npos);
    const std::string md = report::writeReport(report::Format::Markdown, a, {});
    CHECK(md.find("could save up to 191 ms of the 316 ms between MPI\\_Init and MPI\\_Finalize:") != std::string::npos);

    a.pop.region = "window"; // no MPI_Init: the whole run is the span
    a.pop.runtimeNs = a.summary.wallNs;
    CHECK(report::writeReport(report::Format::Text, a, {}).find("of the 722 ms run (") != std::string::npos);
}

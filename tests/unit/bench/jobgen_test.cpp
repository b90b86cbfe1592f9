// SPDX-License-Identifier: MIT
// The big-job generator (bench/scale) against the analyzer: the analysis of a generated job finds
// exactly the answers the generator computed from its own model (straggler, wait totals per rank,
// events, I/O time), written as a trace and as a raw capture converted by the store; and a job's
// first 64 ranks have the same per-rank figures whatever the job's size.
#include <catch2/catch.hpp>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/store/merge.hpp"
#include "job_model.hpp"
#include "process_runner.hpp"
#include "raw_sink.hpp"
#include "trace_sink.hpp"

using namespace hpcprof;
using namespace hpcprof::bench::jobgen;

namespace {

analyzer::Analysis analyse(const std::string& path) {
    auto trace = analyzer::Trace::open(path);
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeTrace(*trace, {});
    INFO(a.status().message());
    REQUIRE(a.ok());
    return std::move(*a);
}

/// Every answer of the generator, checked against the analysis.
void checkAnswers(const analyzer::Analysis& a, const Answers& x) {
    CHECK(a.summary.rankCount == x.ranks);
    CHECK(a.summary.events == x.events);
    CHECK(a.waits.completeInstances == x.collectiveInstances);
    CHECK(a.waits.incompleteInstances == 0);
    CHECK(a.waits.matchedMessages == x.matchedMessages);
    CHECK(a.waits.unmatchedMessages == 0);
    CHECK(a.waits.collectiveWaitNs == x.collectiveWaitNs);
    CHECK(a.waits.lateSenderNs == x.lateSenderNs);
    CHECK(a.waits.lateReceiverNs == x.lateReceiverNs);
    REQUIRE(!a.waits.stragglers.empty());
    CHECK(a.waits.stragglers.front().rank == x.straggler);
    REQUIRE(a.waits.perRank.size() == x.perRank.size());
    REQUIRE(a.ranks.size() == x.perRank.size());
    for (size_t r = 0; r < x.perRank.size(); ++r) {
        INFO("rank " << r);
        const RankAnswer& e = x.perRank[r];
        CHECK(a.waits.perRank[r].rank == e.rank);
        CHECK(a.waits.perRank[r].collectiveWaitNs == e.collectiveWaitNs);
        CHECK(a.waits.perRank[r].lateSenderNs == e.lateSenderNs);
        CHECK(a.waits.perRank[r].lateReceiverNs == e.lateReceiverNs);
        CHECK(a.ranks[r].events == e.events);
        CHECK(a.ranks[r].ioTotalNs == e.ioNs);
    }
    for (const analyzer::Straggler& s : a.waits.stragglers) {
        INFO("straggler " << s.rank);
        CHECK(s.inflictedWaitNs == x.perRank[size_t(s.rank)].inflictedNs);
        CHECK(s.timesLast == x.perRank[size_t(s.rank)].timesLast);
    }
}

} // namespace

TEST_CASE("the analysis of a generated job finds the generator's answers", "[bench][jobgen]") {
    test::TempDir dir;
    JobSpec spec;
    spec.ranks = 16;
    spec.eventsPerRank = 2'000;
    spec.seed = 7;
    const Answers x = expected(spec);
    REQUIRE(x.straggler == spec.stragglerRank());
    REQUIRE(x.collectiveWaitNs > 0);
    REQUIRE(x.lateSenderNs > 0);

    SECTION("written as a trace") {
        auto written = writeTrace(spec, dir / "job.hpcprof");
        INFO(written.status().message());
        REQUIRE(written.ok());
        CHECK(*written == x.events);
        checkAnswers(analyse(dir / "job.hpcprof"), x);
    }
    SECTION("written as a raw capture and converted") {
        auto written = writeRaw(spec, dir / "job.raw");
        INFO(written.status().message());
        REQUIRE(written.ok());
        store::MergeOptions o;
        o.rawDir = dir / "job.raw";
        o.output = dir / "job.hpcprof";
        auto merged = store::mergeRawDirectory(o);
        INFO(merged.status().message());
        REQUIRE(merged.ok());
        CHECK(merged->events == x.events);
        checkAnswers(analyse(dir / "job.hpcprof"), x);
    }
}

TEST_CASE("a generated job's first 64 ranks have the same figures at 64 and 256 ranks", "[bench][jobgen]") {
    test::TempDir dir;
    JobSpec small, big;
    small.ranks = 64;
    big.ranks = 256;
    small.eventsPerRank = big.eventsPerRank = 300;
    small.seed = big.seed = 3;
    small.stragglerExtraNs = big.stragglerExtraNs = 0; // the subset's ranks keep their timelines
    REQUIRE(writeTrace(small, dir / "small.hpcprof").ok());
    REQUIRE(writeTrace(big, dir / "big.hpcprof").ok());
    const analyzer::Analysis a = analyse(dir / "small.hpcprof"), b = analyse(dir / "big.hpcprof");
    checkAnswers(a, expected(small));
    checkAnswers(b, expected(big));
    // Events and I/O are per rank: the same on the subset, 4 times as many in all.
    CHECK(b.summary.events == 4 * a.summary.events);
    for (size_t r = 0; r < 64; ++r) {
        INFO("rank " << r);
        CHECK(b.ranks[r].events == a.ranks[r].events);
        CHECK(b.ranks[r].ioTotalNs == a.ranks[r].ioTotalNs);
        // Ranks 1..62 receive from the same left neighbour in both jobs: the same late sends.
        if (r > 0 && r < 63) CHECK(b.waits.perRank[r].lateSenderNs == a.waits.perRank[r].lateSenderNs);
    }
}

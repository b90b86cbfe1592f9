// SPDX-License-Identifier: MIT
// Class buckets of a rank and of its tracks (the timeline's summary rows and mipmap): exact
// nanoseconds on chosen events, nested events counted once, events crossing buckets split, and
// the buckets adding up to the analyzer's breakdown.
#include <catch2/catch.hpp>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/class_shares.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using schema::Category;

namespace {
struct Opened {
    test::TempDir dir;
    std::unique_ptr<Trace> trace;
    std::unique_ptr<TraceIndex> index;
    std::unique_ptr<ClassShareQuery> query;
};

std::unique_ptr<Opened> open(const test::TraceBuilder& b) {
    auto o = std::make_unique<Opened>();
    b.write(o->dir / "t.hpcprof");
    auto trace = Trace::open(o->dir / "t.hpcprof");
    REQUIRE(trace.ok());
    o->trace = std::make_unique<Trace>(std::move(*trace));
    auto index = TraceIndex::load(*o->trace);
    REQUIRE(index.ok());
    o->index = std::make_unique<TraceIndex>(std::move(*index));
    auto q = ClassShareQuery::open(*o->trace, *o->index);
    REQUIRE(q.ok());
    o->query = std::move(*q);
    return o;
}

int64_t sumBucket(const ClassBuckets& cb, int b) {
    int64_t s = 0;
    for (int c = 0; c < kTimeClassCount; ++c) s += cb.at(b, TimeClass(c));
    return s;
}
} // namespace

TEST_CASE("class buckets: a CPU rank's main thread computes outside its calls; calls crossing buckets are split",
          "[analyzer][class_shares]") {
    test::TraceBuilder b;
    int t = b.rank(0, 0, 1000, 1);
    b.event(t, Category::MpiCollective, "MPI_Allreduce", 150, 200); // [150, 350): buckets 1, 2, 3
    b.event(t, Category::PosixIo, "read", 600, 50);                 // [600, 650): bucket 6
    auto o = open(b);
    auto r = o->query->rank(0, 0, 100, 10, true);
    REQUIRE(r.ok());
    const ClassBuckets& s = r->summary;
    REQUIRE(s.buckets == 10);
    CHECK(s.at(0, TimeClass::Compute) == 100);
    CHECK(s.at(1, TimeClass::Compute) == 50);
    CHECK(s.at(1, TimeClass::Communication) == 50);
    CHECK(s.at(2, TimeClass::Communication) == 100);
    CHECK(s.at(3, TimeClass::Communication) == 50);
    CHECK(s.at(3, TimeClass::Compute) == 50);
    CHECK(s.at(6, TimeClass::Io) == 50);
    CHECK(s.at(6, TimeClass::Compute) == 50);
    for (int k = 0; k < 10; ++k) CHECK(sumBucket(s, k) == 100);
    // The main thread's own buckets are the same (it is the reference timeline).
    REQUIRE(r->tracks.count(1));
    CHECK(r->tracks.at(1).ns == s.ns);
}

TEST_CASE("class buckets: nested events count once, by the attribution's priority; annotations never count",
          "[analyzer][class_shares]") {
    test::TraceBuilder b;
    int t = b.rank(0, 0, 400, 1);
    b.event(t, Category::UserRange, "step", 0, 400);                             // annotation: ignored
    b.event(t, Category::MpiCollective, "MPI_Bcast", 100, 200).withDepth(1);     // [100, 300)
    b.event(t, Category::PosixIo, "read", 150, 100).withDepth(2);                // inside: comm wins
    b.event(t, Category::MpiSetup, "MPI_Comm_split", 280, 60).withDepth(1);      // setup beats comm
    auto o = open(b);
    auto r = o->query->rank(0, 0, 400, 1, false);
    REQUIRE(r.ok());
    const ClassBuckets& s = r->summary;
    CHECK(s.at(0, TimeClass::Setup) == 60);           // [280, 340)
    CHECK(s.at(0, TimeClass::Communication) == 180);  // [100, 280)
    CHECK(s.at(0, TimeClass::Io) == 0);               // nested in the Bcast: not counted again
    CHECK(s.at(0, TimeClass::Compute) == 160);        // [0, 100) and [340, 400)
    CHECK(sumBucket(s, 0) == 400);
    CHECK(r->tracks.empty());
}

TEST_CASE("class buckets: outside the process's life is idle; a helper thread's gaps are idle, not compute",
          "[analyzer][class_shares]") {
    test::TraceBuilder b;
    int main = b.rank(0, 100, 300, 1);
    int helper = b.thread(main, 4242);
    b.event(helper, Category::PosixIo, "write", 150, 50);
    auto o = open(b);
    auto r = o->query->rank(0, 0, 100, 4, true);
    REQUIRE(r.ok());
    const ClassBuckets& s = r->summary;
    CHECK(s.at(0, TimeClass::Idle) == 100);     // before the process
    CHECK(s.at(1, TimeClass::Compute) == 100);  // the main thread is outside any call
    CHECK(s.at(3, TimeClass::Idle) == 100);     // after it
    REQUIRE(r->tracks.count(2));
    const ClassBuckets& h = r->tracks.at(2);
    CHECK(h.at(1, TimeClass::Io) == 50);
    CHECK(h.at(1, TimeClass::Idle) == 50);
    CHECK(h.at(1, TimeClass::Compute) == 0);
}

TEST_CASE("class buckets add up to the analyzer's exclusive breakdown", "[analyzer][class_shares]") {
    test::TraceBuilder b;
    for (int rank = 0; rank < 2; ++rank) {
        int t = b.rank(rank, 0, 10'000, 2);
        for (int i = 0; i < 20; ++i) {
            b.event(t, Category::MpiCollective, "MPI_Allreduce", 500 * i + 37 * rank, 210 + 13 * i);
            b.event(t, Category::PosixIo, "write", 500 * i + 300, 40 + rank).withDepth(0);
        }
    }
    auto o = open(b);
    AnalysisOptions opt;
    opt.window.kind = WindowSpec::Kind::Whole;
    auto a = analyzeTrace(*o->trace, opt);
    REQUIRE(a.ok());
    for (const auto& rb : a->ranks) {
        auto r = o->query->rank(rb.rank, 0, 333, 31, false); // 31 buckets of 333 ns: 10 323 ns
        REQUIRE(r.ok());
        for (int c = 0; c < kTimeClassCount; ++c) {
            if (TimeClass(c) == TimeClass::Idle) continue; // the grid overhangs the window
            int64_t sum = 0;
            for (int k = 0; k < 31; ++k) sum += r->summary.at(k, TimeClass(c));
            CHECK(sum == rb.exclusive[c]);
        }
    }
}

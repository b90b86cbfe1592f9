// SPDX-License-Identifier: MIT
// Class buckets of a rank and of its tracks (the timeline's summary rows and mipmap): exact
// nanoseconds on chosen events, nested events counted once, events crossing buckets split, and
// the buckets adding up to the analyzer's breakdown; the class summary kept next to a trace.
#include <utime.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/class_shares.hpp"
#include "hpcprof/analyzer/class_summary.hpp"
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

namespace {
/// The quantised share of class `c` in bucket `k`.
int shareAt(const ClassSummary::Shares& s, int k, TimeClass c) { return s[size_t(k) * kTimeClassCount + size_t(c)]; }
} // namespace

TEST_CASE("class summary: kept next to the trace, read back equal to a fresh build, exact on chosen events",
          "[analyzer][class_shares]") {
    test::TraceBuilder b;
    // 2,048 buckets of 100 ns over the process's life [0, 204 800).
    int t = b.rank(0, 0, 204'800, 1);
    int helper = b.thread(t, 4242);
    b.event(t, Category::MpiCollective, "MPI_Allreduce", 150, 200);            // buckets 1-3, crossing
    b.event(t, Category::UserRange, "step", 1000, 300);                         // annotation: never counts
    b.event(t, Category::MpiCollective, "MPI_Bcast", 1000, 200).withDepth(1);   // [1000, 1200)
    b.event(t, Category::PosixIo, "read", 1050, 100).withDepth(2);              // nested: comm wins
    b.event(t, Category::MpiSetup, "MPI_Comm_split", 1180, 60).withDepth(1);    // setup beats comm
    b.event(helper, Category::PosixIo, "write", 300, 200);                      // buckets 3-4
    const int64_t mainId = t + 1, helperId = helper + 1; // track ids count from 1
    auto o = open(b);
    const std::string path = o->dir / "t.hpcprof";
    REQUIRE(keepClassSummary(path, 2).ok());
    auto kept = readClassSummary(path);
    REQUIRE(kept);
    CHECK(kept->begin == 0);
    CHECK(kept->bucketNs == 100);
    CHECK(kept->buckets == 2048);
    // The same as a fresh build, and as the window query of the whole grid quantised.
    auto fresh = buildClassSummary(*o->query, *o->index, 0, 204'800, 1);
    REQUIRE(fresh.ok());
    CHECK(kept->groups == fresh->groups);
    CHECK(kept->tracks == fresh->tracks);
    auto window = o->query->rank(0, 0, 100, 2048, true);
    REQUIRE(window.ok());
    REQUIRE(kept->groups.size() == 1);
    const ClassSummary::Shares& rank = kept->groups.begin()->second;
    CHECK(rank == quantizeShares(window->summary));
    REQUIRE(kept->tracks.size() == 2);
    CHECK(kept->tracks.at(mainId) == quantizeShares(window->tracks.at(mainId)));
    CHECK(kept->tracks.at(helperId) == quantizeShares(window->tracks.at(helperId)));
    // By hand (shares of 255, cumulative rounding in class order): bucket 1 is half compute,
    // half comm (128 + 127); bucket 2 all comm; buckets 10-11 comm over the nested read;
    // bucket 11 [1100, 1180) comm, [1180, 1200) setup; bucket 12 [1200, 1240) setup, then compute.
    CHECK(shareAt(rank, 0, TimeClass::Compute) == 255);
    CHECK(shareAt(rank, 1, TimeClass::Compute) == 128);
    CHECK(shareAt(rank, 1, TimeClass::Communication) == 127);
    CHECK(shareAt(rank, 2, TimeClass::Communication) == 255);
    CHECK(shareAt(rank, 3, TimeClass::Communication) == 127); // [300, 350), then the helper's write: compute wins
    CHECK(shareAt(rank, 3, TimeClass::Io) == 0);
    CHECK(shareAt(rank, 10, TimeClass::Communication) == 255);
    CHECK(shareAt(rank, 10, TimeClass::Io) == 0);
    CHECK(shareAt(rank, 11, TimeClass::Communication) == 204);
    CHECK(shareAt(rank, 11, TimeClass::Setup) == 51);
    CHECK(shareAt(rank, 12, TimeClass::Compute) == 153);
    CHECK(shareAt(rank, 12, TimeClass::Setup) == 102);
    // The helper's own strip: its write, its gaps idle.
    CHECK(shareAt(kept->tracks.at(helperId), 3, TimeClass::Io) == 255);
    CHECK(shareAt(kept->tracks.at(helperId), 4, TimeClass::Io) == 255);
    CHECK(shareAt(kept->tracks.at(helperId), 5, TimeClass::Idle) == 255);
    CHECK(shareAt(kept->tracks.at(helperId), 3, TimeClass::Compute) == 0);
}

TEST_CASE("class summary: a trace that changed or a cut file is not taken", "[analyzer][class_shares]") {
    test::TraceBuilder b;
    b.event(b.rank(0, 0, 10'000, 1), Category::MpiCollective, "MPI_Allreduce", 150, 200);
    auto o = open(b);
    const std::string path = o->dir / "t.hpcprof";
    REQUIRE(keepClassSummary(path).ok());
    CHECK(readClassSummary(path));
    struct utimbuf times {1, 1}; // another modification time: a rewritten trace
    REQUIRE(::utime(path.c_str(), &times) == 0);
    CHECK_FALSE(readClassSummary(path));
    REQUIRE(keepClassSummary(path).ok());
    CHECK(readClassSummary(path));
    // Not through a link (a shared folder: nobody else's file under the trace).
    std::filesystem::rename(classSummaryPath(path), o->dir / "elsewhere");
    std::filesystem::create_symlink(o->dir / "elsewhere", classSummaryPath(path));
    CHECK_FALSE(readClassSummary(path));
    std::filesystem::remove(classSummaryPath(path));
    std::filesystem::rename(o->dir / "elsewhere", classSummaryPath(path));
    CHECK(readClassSummary(path));
    std::filesystem::resize_file(classSummaryPath(path), std::filesystem::file_size(classSummaryPath(path)) - 1);
    CHECK_FALSE(readClassSummary(path));
}

// SPDX-License-Identifier: MIT
// The agent's folding of work requests beyond the rate (agent/ibverbs/wr_fold.hpp), driven
// directly with chosen times: the budget per queue and millisecond, the Aggregate record's
// counts and latency bins, completions matched in post order, a refused batch taken back (also
// across a new bucket), and following stopped at a surprise while requests still fold.
//
// Its own executable: fold::configure() reads the rate once per process, and these tests need
// 1000 requests a second (one per millisecond) on a clock in nanoseconds.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "ibverbs/wr_fold.hpp"
#include "process_runner.hpp"
#include "runtime/recorder.hpp"

using namespace hpcprof::agent::ibverbs;
namespace raw = hpcprof::schema::raw;

namespace {

constexpr uint64_t kMs = 1'000'000; // ticks are ns with HPCPROF_CLOCK=monotonic

/// Starts the recorder into a fresh raw folder once, with one request per ms kept in full.
void startOnce() {
    static hpcprof::test::TempDir dir;
    static bool started = [] {
        setenv("HPCPROF_RAW_DIR", dir.path().c_str(), 1);
        setenv("HPCPROF_RDMA_EVENT_RATE", "1000", 1);
        setenv("HPCPROF_CLOCK", "monotonic", 1);
        hpcprof::agent::ensureStarted();
        fold::configure();
        return true;
    }();
    REQUIRE(started);
}

const auto& counts(const fold::WorkQueue& q) { return q.open->u.aggregate; }

} // namespace

TEST_CASE("Beyond one request per ms a queue's requests fold, and their completions are timed",
          "[rdma][fold]") {
    startOnce();
    fold::WorkQueue* q = fold::workQueue(0, 101, false);
    REQUIRE(q);
    CHECK(fold::workQueue(0, 101, false) == q); // the same queue again
    CHECK(fold::workQueue(0, 101, true) != q);  // its receive queue is another
    const uint64_t t = 10 * kMs;
    CHECK_FALSE(fold::post(*q, t, 1, 100, true)); // the bucket's first: in full
    CHECK(fold::post(*q, t + 10, 2, 200, true));  // then folded
    CHECK(fold::post(*q, t + 20, 3, 300, false)); // unsignalled: folded, nothing to wait for
    CHECK(fold::post(*q, t + 30, 4, 400, true));
    REQUIRE(q->open);
    CHECK(counts(*q).posted == 3);
    CHECK(counts(*q).bytes == 900);
    CHECK(q->open->ts == t + 10);

    // In post order: the full one is the caller's to write, the folded ones are counted with
    // their latency (1.5 us: the bin up to 2 us; 600 us: up to 1 ms).
    CHECK_FALSE(fold::complete(0, 101, false, 1, t + 1000));
    CHECK(fold::complete(0, 101, false, 2, t + 10 + 1500));
    CHECK(fold::complete(0, 101, false, 4, t + 30 + 600'000));
    CHECK(counts(*q).completed == 2);
    CHECK(counts(*q).latency[fold::latencyBin(1500)] == 1);
    CHECK(fold::latencyBin(1500) == 1);
    CHECK(counts(*q).latency[fold::latencyBin(600'000)] == 1);
    CHECK(fold::latencyBin(600'000) == 10);
    CHECK(counts(*q).end == t + 30 + 600'000);

    // A new millisecond: a new budget and a new record.
    raw::RdmaRecord* first = q->open;
    CHECK_FALSE(fold::post(*q, t + kMs + 5, 5, 10, true));
    CHECK(fold::post(*q, t + kMs + 6, 6, 10, true));
    CHECK(q->open != first);
    CHECK(counts(*q).posted == 1);
    CHECK(first->u.aggregate.posted == 3); // the old one keeps its counts
}

TEST_CASE("A refused batch is taken back, also when it began a new bucket", "[rdma][fold]") {
    startOnce();
    fold::WorkQueue* q = fold::workQueue(0, 102, false);
    REQUIRE(q);
    const uint64_t t = 50 * kMs;
    CHECK_FALSE(fold::post(*q, t, 1, 64, true));
    CHECK(fold::post(*q, t + 1, 2, 64, true));
    raw::RdmaRecord* open = q->open;
    REQUIRE(open);
    fold::Mark m = fold::mark(*q);
    CHECK(fold::post(*q, t + 2, 3, 1000, true));
    CHECK(fold::post(*q, t + 2, 4, 1000, true));
    fold::rollBack(*q, m);
    CHECK(open->u.aggregate.posted == 1);
    CHECK(open->u.aggregate.bytes == 64);
    // The batch's requests left the FIFO: after request 1 (in full) comes request 2.
    CHECK_FALSE(fold::complete(0, 102, false, 1, t + 4000));
    CHECK(fold::complete(0, 102, false, 2, t + 5000));
    CHECK(q->track == fold::Track::Following);

    // A batch whose first request opens the next bucket's record.
    m = fold::mark(*q);
    CHECK_FALSE(fold::post(*q, t + kMs, 5, 10, true)); // the new bucket's one in full
    CHECK(fold::post(*q, t + kMs, 6, 10, true));
    raw::RdmaRecord* opened = q->open;
    REQUIRE(opened != open);
    fold::rollBack(*q, m);
    CHECK(opened->u.aggregate.posted == 0);
    CHECK(opened->u.aggregate.bytes == 0);
    CHECK(open->u.aggregate.posted == 1);
}

TEST_CASE("A completion out of order stops following the queue; its requests still fold",
          "[rdma][fold]") {
    startOnce();
    fold::WorkQueue* q = fold::workQueue(0, 103, true);
    REQUIRE(q);
    const uint64_t t = 90 * kMs;
    CHECK_FALSE(fold::post(*q, t, 1, 8, true));
    for (uint64_t id = 2; id <= 4; ++id) CHECK(fold::post(*q, t + id, id, 8, true));
    // Request 3 completes before 2 (2 completed on another thread): 2 is skipped, 3 counted.
    CHECK(fold::complete(0, 103, true, 3, t + 3 + 2000));
    CHECK(q->track == fold::Track::Off);
    CHECK(counts(*q).completed == 1);
    CHECK(fold::complete(0, 103, true, 4, t + 4 + 2000)); // still in the FIFO: counted
    CHECK(fold::post(*q, t + 10, 5, 8, true));             // folds, not followed any more
    CHECK(q->tail == q->head);
    CHECK_FALSE(fold::complete(0, 103, true, 5, t + 5000)); // the caller writes it in full
    CHECK(counts(*q).posted == 4);
    CHECK(counts(*q).completed == 2);
}

TEST_CASE("More requests outstanding than the FIFO holds, or a failed completion, stop following",
          "[rdma][fold]") {
    startOnce();
    fold::WorkQueue* q = fold::workQueue(0, 104, false);
    REQUIRE(q);
    const uint64_t t = 130 * kMs;
    for (uint64_t id = 0; id < fold::kRingSize; ++id) fold::post(*q, t + id, id, 1, true);
    CHECK(q->track == fold::Track::Following);
    CHECK(fold::post(*q, t + fold::kRingSize, fold::kRingSize, 1, true)); // folds, not followed
    CHECK(q->track == fold::Track::Off);

    fold::WorkQueue* r = fold::workQueue(0, 105, true);
    REQUIRE(r);
    CHECK_FALSE(fold::post(*r, t, 1, 1, true));
    CHECK(fold::post(*r, t + 1, 2, 1, true));
    fold::fail(0, 105);
    CHECK(r->track == fold::Track::Off);
    CHECK_FALSE(fold::complete(0, 105, true, 2, t + 100)); // forgotten: written in full
}

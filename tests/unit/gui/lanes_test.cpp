// SPDX-License-Identifier: MIT
// The timeline's ranks: fitting every rank on the first screen, ordering and filtering them by
// their breakdown, the class shares of the summary rows (quantised shares, their cache file) and
// the fetch of summary rows.
#include <sys/stat.h>
#include <utime.h>

#include <sqlite3.h>

#include <catch2/catch.hpp>
#include <iterator>
#include <map>
#include <mutex>
#include <random>

#include "gui_test_support.hpp"
#include "models/class_mipmap.hpp"
#include "models/lane_layout.hpp"
#include "models/rank_filter.hpp"
#include "models/timeline_fetch.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

using namespace hpcprof;
using namespace hpcprof::gui;
using analyzer::TimeClass;

namespace {
struct Fixture {
    test::TempDir dir;
    TraceDataPtr data;
    Fixture() {
        test::ensureGuiApp();
        test::writeClassesTrace(dir / "classes.hpcprof");
        auto d = loadTraceData(dir / "classes.hpcprof");
        REQUIRE(d.ok());
        data = *d;
    }
};
} // namespace

TEST_CASE("fitTo: groups unfold when they fit, else fold to summary rows that share the height", "[gui][lanes]") {
    Fixture f;
    LaneLayout l;
    l.build(*f.data);
    // Rank 0: header, main thread, GPU stream; rank 1: header, main thread.
    l.fitTo(1000);
    CHECK_FALSE(l.groups()[0].collapsed);
    CHECK(l.headerHeight() == LaneLayout::kHeaderHeight);
    const int unfolded = l.totalHeight();
    l.fitTo(unfolded - 1);
    CHECK_FALSE(l.groups()[0].collapsed); // room for rank 0's lanes and rank 1's summary row
    CHECK(l.groups()[1].collapsed);
    CHECK(l.headerHeight() == LaneLayout::kHeaderHeight);
    CHECK(l.totalHeight() <= unfolded - 1);
    l.fitTo(2 * LaneLayout::kHeaderHeight + 5);
    CHECK(l.groups()[0].collapsed);
    CHECK(l.groups()[1].collapsed);
    CHECK(l.headerHeight() == 20); // no lanes fit: the two summary rows share the height
    l.fitTo(200);
    CHECK_FALSE(l.groups()[0].collapsed);
    l.growRows(1, 20); // rank 0's main thread turns out 20 rows deep: only summary rows fit
    l.fitTo(200);
    CHECK(l.groups()[0].collapsed);
    CHECK(l.headerHeight() == LaneLayout::kMaxSummaryHeight);
    l.fitTo(10);
    CHECK(l.headerHeight() == 5);
    CHECK(l.totalHeight() == 10);
    CHECK(l.visibleGroups(0, 10).size() == 2);
    CHECK(l.visibleTracks(0, 10).empty()); // folded lanes are not fetched
    l.fitTo(2);
    CHECK(l.ranksPerRow() == 1);
    CHECK(l.rowMembers(1) == std::vector<int>{1});
    l.fitTo(1);
    CHECK(l.headerHeight() == LaneLayout::kMinHeaderHeight);
    // More ranks than pixel rows: both folded ranks share the one row.
    CHECK(l.ranksPerRow() == 2);
    CHECK(l.totalHeight() == 1);
    CHECK(l.groups()[0].y == l.groups()[1].y);
    CHECK(l.rowMembers(1) == std::vector<int>{0, 1});
    CHECK(l.hitTest(0).group == 0);
    CHECK(l.visibleGroups(0, 1).size() == 2);
    // Unfolding one takes it out of the shared row.
    l.setCollapsed(0, false);
    CHECK(l.rowMembers(1) == std::vector<int>{1});
    CHECK(l.groups()[1].y > l.groups()[0].y);
    CHECK(l.totalHeight() > 2);
}

TEST_CASE("orderRanks: the breakdown's order, and a filter hides the other ranks", "[gui][lanes]") {
    Fixture f;
    LaneLayout l;
    l.build(*f.data);
    l.fitTo(1000);
    l.orderRanks({1, 0}, false);
    REQUIRE(l.groups().size() == 2);
    CHECK(l.groups()[0].rank == 1);
    CHECK(l.groups()[0].y == 0);
    CHECK(l.hitTest(1).group == 0);
    l.orderRanks({1}, true);
    CHECK(l.groups()[1].rank == 0);
    CHECK(l.groups()[1].hidden);
    const auto shown = l.visibleGroups(0, 10'000);
    REQUIRE(shown.size() == 1);
    CHECK(shown[0] == l.groups()[0].processId);
    CHECK(l.visibleTracks(0, 10'000).size() == 1); // rank 1's main thread only
    l.orderRanks({}, false);
    CHECK(l.groups()[0].rank == 0);
    CHECK_FALSE(l.groups()[1].hidden);
}

TEST_CASE("rank filters: CLASS>PCT and CLASS<PCT", "[gui][lanes]") {
    bool ok = false;
    auto f = parseRankFilter(QStringLiteral("comm>30"), &ok);
    REQUIRE(ok);
    REQUIRE(f);
    CHECK(f->cls == TimeClass::Communication);
    CHECK(f->greater);
    CHECK(f->pct == 30);
    f = parseRankFilter(QStringLiteral(" compute < 12.5 % "), &ok);
    REQUIRE((ok && f));
    CHECK(f->cls == TimeClass::Compute);
    CHECK_FALSE(f->greater);
    CHECK(f->pct == 12.5);
    CHECK_FALSE(parseRankFilter(QString(), &ok));
    CHECK(ok);
    CHECK_FALSE(parseRankFilter(QStringLiteral("bogus>3"), &ok));
    CHECK_FALSE(ok);
    CHECK_FALSE(parseRankFilter(QStringLiteral("comm=3"), &ok));
    CHECK_FALSE(ok);
}

TEST_CASE("share strips: quantised shares add up per bucket; a span's shares weigh the buckets it covers",
          "[gui][lanes]") {
    analyzer::ClassBuckets b;
    b.begin = 1000;
    b.bucketNs = 300;
    b.buckets = 2;
    b.ns.assign(2 * analyzer::kTimeClassCount, 0);
    b.ns[size_t(TimeClass::Compute)] = 100;
    b.ns[size_t(TimeClass::Communication)] = 100;
    b.ns[size_t(TimeClass::Io)] = 100;
    b.ns[analyzer::kTimeClassCount + size_t(TimeClass::Communication)] = 300;
    const ShareStrip s = toShareStrip(b);
    int sum = 0;
    for (int c = 0; c < analyzer::kTimeClassCount; ++c) sum += s.share[size_t(c)];
    CHECK(sum == 255); // 85 + 85 + 85, never 256 from rounding each third up
    CHECK(s.at(0, TimeClass::Compute) == Approx(1.0 / 3).margin(0.003));
    CHECK(s.at(1, TimeClass::Communication) == 1.0);
    // [1150, 1450): half of bucket 0 and half of bucket 1.
    CHECK(s.shareIn(1150, 1450, TimeClass::Communication) == Approx(0.5 / 3 + 0.5).margin(0.004));
    CHECK(s.shareIn(1150, 1450, TimeClass::Compute) == Approx(0.5 / 3).margin(0.004));
    // Outside the strip nothing is claimed.
    CHECK(s.shareIn(0, 1000, TimeClass::Compute) == 0);
    CHECK(s.shareIn(1600, 2200, TimeClass::Communication) == Approx(0.0).margin(0.0));
    CHECK(s.shareIn(1300, 1900, TimeClass::Communication) == Approx(0.5));
    CHECK(sharesText(s, 1000, 1300) == QStringLiteral("compute 33 %, comm 33 %, io 33 %"));
    CHECK(sharesText(s, 1150, 1450) == QStringLiteral("comm 67 %, compute 17 %, io 17 %"));
    CHECK(sharesText(s, 0, 900).isEmpty());
}

TEST_CASE("the class mipmap is cached next to the trace and rebuilt when the trace changes", "[gui][lanes]") {
    Fixture f;
    auto built = threadClassMipmap(*f.data);
    REQUIRE(built.ok());
    CHECK((*built)->groups.size() == 2);
    CHECK((*built)->tracks.size() == 3);
    auto cached = readMipmapCache(f.data->path);
    REQUIRE(cached);
    CHECK(cached->fromCache);
    CHECK(cached->bucketNs == (*built)->bucketNs);
    for (const auto& [id, strip] : (*built)->tracks) CHECK(cached->tracks.at(id)->share == strip->share);
    for (const auto& [id, strip] : (*built)->groups) CHECK(cached->groups.at(id)->share == strip->share);
    // A rewritten trace (another modification time) does not take the old cache.
    struct utimbuf times {1, 1};
    REQUIRE(::utime(f.data->path.c_str(), &times) == 0);
    CHECK_FALSE(readMipmapCache(f.data->path));
}

TEST_CASE("summary rows are fetched as the ranks' exclusive breakdown per bucket", "[gui][lanes]") {
    Fixture f;
    FetchRequest req;
    req.window = f.data->bounds;
    req.resolutionNs = quantizedResolution(1000.0); // the whole run on 1000 px: the mipmap serves it
    for (const auto& p : f.data->index.processes()) req.groups.push_back(p.id);
    auto r = fetchTimeline(*f.data, req);
    REQUIRE(r.ok());
    REQUIRE((*r)->groups.size() == 2);
    // Rank 1 (a CPU rank) waits in MPI_Allreduce over [350, 400) us, computes before it.
    int64_t rank1 = -1;
    for (const auto& p : f.data->index.processes())
        if (p.rank == 1) rank1 = p.id;
    const ShareStrip& s1 = *(*r)->groups.at(rank1);
    CHECK(s1.shareIn(352'000, 398'000, TimeClass::Communication) > 0.99);
    CHECK(s1.shareIn(100'000, 300'000, TimeClass::Compute) > 0.99);
    // Zoomed in past the mipmap: computed from the events of the window, same answer.
    req.window = {340'000, 410'000};
    req.resolutionNs = 64;
    auto z = fetchTimeline(*f.data, req);
    REQUIRE(z.ok());
    const ShareStrip& z1 = *(*z)->groups.at(rank1);
    CHECK(z1.bucketNs == 32);
    CHECK(z1.shareIn(350'000, 400'000, TimeClass::Communication) > 0.99);
    CHECK(z1.shareIn(340'000, 349'000, TimeClass::Compute) > 0.99);
}

TEST_CASE("zoomed out, a dense lane shows its class shares, unless it holds only annotations", "[gui][lanes]") {
    test::TraceBuilder b;
    const int main = b.rank(0, 0, 1'000'000, 1);
    const int ops = b.thread(main, 777);
    for (int i = 0; i < 5000; ++i) {
        b.event(main, schema::Category::PosixIo, "write", 200 * i, 100);
        b.event(ops, schema::Category::CpuOp, "aten::add", 200 * i, 150);
    }
    test::TempDir dir;
    b.write(dir / "dense.hpcprof");
    auto d = loadTraceData(dir / "dense.hpcprof");
    REQUIRE(d.ok());
    FetchRequest req;
    req.window = (*d)->bounds;
    req.resolutionNs = quantizedResolution(1000.0);
    req.tracks = {1, 2};
    auto r = fetchTimeline(**d, req);
    REQUIRE(r.ok());
    const TrackDraw& io = *(*r)->tracks.at(1);
    REQUIRE(io.shares);
    CHECK(io.items.empty());
    CHECK(io.shares->shareIn(0, 1'000'000, TimeClass::Io) == Approx(0.5).margin(0.01));
    CHECK(io.shares->shareIn(0, 1'000'000, TimeClass::Compute) == Approx(0.5).margin(0.01)); // the main thread's gaps
    const TrackDraw& cpuOps = *(*r)->tracks.at(2);
    CHECK_FALSE(cpuOps.items.empty()); // annotations: drawn as (folded) events, not as an empty strip
}

namespace {
/// Four ranks of seeded random events (nested calls, instants, events crossing the mipmap's
/// buckets, a second thread, a GPU rank), to compare the mipmap's two builds on.
void writeRandomRanksTrace(const std::string& path) {
    using schema::Category;
    test::TraceBuilder b;
    std::mt19937_64 rng(21);
    const Category cats[] = {Category::MpiP2p, Category::MpiCollective, Category::PosixIo, Category::GpuSync,
                             Category::ComputeRange, Category::Nvtx};
    for (int r = 0; r < 4; ++r) {
        const int main = b.rank(r, 0, 10'000'000, 4);
        const int other = b.thread(main, 100 + r);
        const int gpu = r == 3 ? b.gpuStream(main, 0, 7) : -1;
        for (int track : {main, other, gpu}) {
            if (track < 0) continue;
            int64_t t = int64_t(rng() % 5000);
            while (t < 9'900'000) {
                const int64_t dur = int64_t(rng() % 40'000); // 0: an instant; up to ~8 buckets
                const Category c = track == gpu ? Category::GpuKernel : cats[rng() % std::size(cats)];
                b.event(track, c, "outer", t, dur);
                if (dur > 10 && rng() % 2) b.event(track, cats[rng() % std::size(cats)], "inner", t + dur / 4, dur / 2).withDepth(1);
                t += dur + int64_t(rng() % 20'000);
            }
        }
    }
    b.write(path);
}
} // namespace

TEST_CASE("the mipmap built by one sweep per track over threads equals the rank-by-rank build", "[gui][lanes]") {
    test::ensureGuiApp();
    test::TempDir dir;
    writeRandomRanksTrace(dir / "random.hpcprof");
    auto d = loadTraceData(dir / "random.hpcprof");
    REQUIRE(d.ok());
    auto q = threadClassShares(**d);
    REQUIRE(q.ok());
    const TimeWindow w = (*d)->bounds;
    auto reference = buildClassMipmapByRank(**q, (*d)->index, w.begin, w.end);
    REQUIRE(reference.ok());
    REQUIRE((*reference)->groups.size() == 4);
    REQUIRE((*reference)->tracks.size() == 9);
    for (int threads : {1, 3}) {
        auto swept = buildClassMipmap(**q, (*d)->index, w.begin, w.end, threads);
        REQUIRE(swept.ok());
        CHECK((*swept)->bucketNs == (*reference)->bucketNs);
        REQUIRE((*swept)->groups.size() == 4);
        REQUIRE((*swept)->tracks.size() == 9);
        for (const auto& [id, strip] : (*reference)->groups) CHECK((*swept)->groups.at(id)->share == strip->share);
        for (const auto& [id, strip] : (*reference)->tracks) CHECK((*swept)->tracks.at(id)->share == strip->share);
    }
    // Zoomed in: the visible ranks in one batch over the workers give what rank() gives each.
    std::map<int64_t, std::vector<int64_t>> batched;
    std::mutex mutex;
    REQUIRE((*q)->ranks({0, 1, 2, 3}, 2'000'000, 500, 2'000, true, [&](analyzer::RankClassBuckets&& rb) {
                    std::lock_guard lock(mutex);
                    batched[rb.rank] = rb.summary.ns;
                    for (const auto& [track, cb] : rb.tracks) CHECK(cb.buckets == 2'000);
                }).ok());
    REQUIRE(batched.size() == 4);
    for (int64_t r = 0; r < 4; ++r) {
        auto one = (*q)->rank(r, 2'000'000, 500, 2'000, false);
        REQUIRE(one.ok());
        CHECK(batched.at(r) == one->summary.ns);
    }
    // Not trivially equal: the summaries hold several classes.
    int classes = 0;
    const ShareStrip& s = *(*reference)->groups.begin()->second;
    for (int c = 0; c < analyzer::kTimeClassCount; ++c)
        for (int k = 0; k < s.buckets; ++k)
            if (s.at(k, TimeClass(c)) > 0) {
                ++classes;
                break;
            }
    CHECK(classes >= 4);
}

TEST_CASE("processes with nothing recorded (launcher, pre-exec image) get no group", "[gui][lanes]") {
    using schema::Category;
    test::ensureGuiApp();
    test::TempDir dir;
    test::TraceBuilder b;
    const int launcher = b.rank(-1, 0, 1'000'000); // mpirun: started the ranks, recorded nothing
    (void)launcher;
    const int r0 = b.rank(0, 0, 1'000'000, 2);
    const int r1 = b.rank(1, 0, 1'000'000, 2);
    const int helper = b.rank(-1, 0, 1'000'000); // a non-rank process that did record something
    b.rank(2, 0, 1'000'000, 2); // a rank without a recorded call: it computed, it stays
    b.event(r0, Category::MpiCollective, "MPI_Barrier", 100, 1'000);
    b.event(r1, Category::MpiCollective, "MPI_Barrier", 100, 1'000);
    b.event(helper, Category::PosixIo, "write", 200, 50);
    b.write(dir / "launch.hpcprof");
    auto d = loadTraceData(dir / "launch.hpcprof");
    REQUIRE(d.ok());
    REQUIRE((*d)->index.processes().size() == 5);
    LaneLayout l;
    l.build(**d);
    REQUIRE(l.groups().size() == 4);
    CHECK(l.groups()[0].rank == 0);
    CHECK(l.groups()[1].rank == 1);
    CHECK(l.groups()[2].rank == 2);
    CHECK_FALSE(l.groups()[3].rank); // the helper stays reachable, after the ranks
    CHECK(l.groups()[3].lanes.size() == 1);
}

TEST_CASE("a trace of empty processes only keeps them all", "[gui][lanes]") {
    test::ensureGuiApp();
    test::TempDir dir;
    test::TraceBuilder b;
    b.rank(-1, 0, 1'000'000);
    b.rank(-1, 0, 2'000'000);
    b.write(dir / "empty.hpcprof");
    auto d = loadTraceData(dir / "empty.hpcprof");
    REQUIRE(d.ok());
    LaneLayout l;
    l.build(**d);
    CHECK(l.groups().size() == 2);
}

TEST_CASE("an exec'ed image's lanes fold under the rank that followed with its pid", "[gui][lanes]") {
    using schema::Category;
    test::ensureGuiApp();
    test::TempDir dir;
    test::TraceBuilder b;
    const int before = b.rank(-1, 0, 100'000); // pid 1000: the launcher's fork before exec
    const int launcher = b.rank(-1, 0, 1'000'000); // pid 1001: mpirun itself
    const int r0 = b.rank(0, 100'000, 1'000'000, 1); // pid 1002, to become 1000 below
    for (int t : {before, launcher, r0}) b.setHost(t, "n1");
    b.event(before, Category::PosixIo, "read", 10, 50);
    b.event(launcher, Category::PosixIo, "poll", 10, 500);
    b.event(r0, Category::MpiCollective, "MPI_Barrier", 200'000, 1'000);
    const std::string path = dir / "exec.hpcprof";
    b.write(path);
    {
        sqlite3* db = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
        REQUIRE(sqlite3_exec(db,
                             "UPDATE process SET end_state = 'exec' WHERE pid = 1000;"
                             "UPDATE process SET pid = 1000 WHERE pid = 1002;",
                             nullptr, nullptr, nullptr) == SQLITE_OK);
        sqlite3_close(db);
    }
    auto d = loadTraceData(path);
    REQUIRE(d.ok());
    LaneLayout l;
    l.build(**d);
    REQUIRE(l.groups().size() == 2); // rank 0, then mpirun; no "pid 1000" group
    CHECK(l.groups()[0].rank == 0);
    REQUIRE(l.groups()[0].lanes.size() == 2);
    CHECK(l.groups()[0].lanes[1].name.startsWith(QStringLiteral("pre-exec ")));
    CHECK_FALSE(l.groups()[1].rank);
}

// SPDX-License-Identifier: MIT
// The analysis's event records read below SQL (analyzer/src/event_page_reader.hpp) against the
// same tracks read through SQL: every field and every data-quality count equal, on built traces
// with every kind of value, on the real Kineto traces, and on traces holding what the reader
// leaves to SQL (text, reals, overflowing records, a WAL file, a damaged page).
#include <catch2/catch.hpp>

#include <fcntl.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <tuple>
#include <vector>

#include "analyzer/src/event_page_reader.hpp"
#include "analyzer/src/rowid_table_pages.hpp"
#include "analyzer/src/trace_access.hpp"
#include "analyzer/src/track_scan.hpp"
#include "hpcprof/analyzer/trace_index.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/sqlite_pages.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"
#include "tests/unit/import/real_kineto.hpp"

using namespace hpcprof;
using namespace hpcprof::analyzer;
using detail::EventPageReader;
using schema::Category;

namespace {

using Row = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int32_t,
                       int32_t, int32_t, int32_t, int>;

struct Scanned {
    std::vector<Row> rows;
    std::vector<int64_t> quality;
    bool ok = true;
    std::string error;      ///< the first
    size_t rowsBeforeError = 0; ///< rows read before the track of the first error ended
};

/// Every track of `path`, read with `pages` (or through SQL only), all fields of each event.
Scanned scanAll(const std::string& path, bool withPages, const std::vector<uint8_t>* detailsOf = nullptr) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    auto index = TraceIndex::load(*trace);
    REQUIRE(index.ok());
    const auto pages = withPages ? EventPageReader::open(*trace) : nullptr;
    if (withPages) REQUIRE(pages);
    Scanned out;
    ScanQuality q;
    for (const TrackInfo& t : index->tracks()) {
        Status st = scanTrack(*trace, *index, t, q, [&](const EventRecord& e) {
            out.rows.emplace_back(e.id, e.ts, e.dur, e.bytes, e.seq, e.communicatorId, e.objectId, e.correlationId,
                                  e.nameId, e.peer, e.depth, e.categoryId, e.count, int(e.cls));
        }, detailsOf, pages.get());
        if (out.ok && !st.ok()) {
            out.error = st.message();
            out.rowsBeforeError = out.rows.size();
        }
        out.ok = out.ok && st.ok();
    }
    out.quality = {q.negativeDurations, q.unsortedEvents, q.tracksWithoutIdRange, q.unknownCategories,
                   q.timesOutOfRange};
    return out;
}

void requireSame(const std::string& path, const std::vector<uint8_t>* detailsOf = nullptr) {
    const Scanned sql = scanAll(path, false, detailsOf), below = scanAll(path, true, detailsOf);
    REQUIRE(sql.ok);
    REQUIRE(below.ok);
    REQUIRE(below.rows.size() == sql.rows.size());
    for (size_t i = 0; i < sql.rows.size(); ++i) REQUIRE(below.rows[i] == sql.rows[i]);
    CHECK(below.quality == sql.quality);
}

void exec(const std::string& path, const char* sql) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    const int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
    INFO((err ? err : ""));
    sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

/// One rank with a few thousand events of every kind of value the scan reads: optional columns
/// set and NULL, negative durations, times out of range, counts of 0 and beyond int32, 64-bit ids.
std::string buildVaried(const test::TempDir& dir) {
    test::TraceBuilder b;
    const int main = b.rank(0, 0, 1'000'000'000, 2);
    const int gpu = b.gpuStream(main, 0, 7);
    b.rank(1, 0, 1'000'000'000, 2);
    b.keepInsertionOrder(); // some events out of order: the unsorted count must agree
    for (int64_t i = 0; i < 4000; ++i) {
        const int64_t ts = 1000 + i * 997 - (i % 50 == 7 ? 5000 : 0);
        switch (i % 6) {
        case 0: b.event(main, Category::ComputeRange, "work", ts, 500).withDepth(i % 3); break;
        case 1: b.event(main, Category::MpiCollective, "MPI_Allreduce", ts, 300)
                    .collective("world", 2, i).withBytes(i * 1'000'003); break;
        case 2: b.event(main, Category::MpiP2p, "MPI_Send", ts, i % 7 == 0 ? -40 : 200)
                    .withPeer(1).withTag(i).withBytes(int64_t(1) << 40); break;
        case 3: b.event(main, Category::MpiWait, "MPI_Test", ts, 10).withCount(i % 4 == 0 ? 0 : 5'000'000'000); break;
        case 4: b.event(main, Category::PosixIo, "pwrite", ts, 90).withObject("/data/out").withBytes(4096); break;
        default: b.event(gpu, Category::GpuKernel, "k", ts, 250).correlationId = i * 1'000'000'007; break;
        }
        if (i % 400 == 9) b.event(main, Category::Nvtx, "step", ts, 300'000);
    }
    b.event(main, Category::Nvtx, "far", int64_t(1) << 62, 5); // out of range: skipped by both
    const std::string path = dir / "varied.hpcprof";
    b.write(path);
    return path;
}

/// A trace opened with its index and its event reader (required).
struct Opened {
    std::unique_ptr<Trace> trace;
    std::unique_ptr<TraceIndex> index;
    std::unique_ptr<EventPageReader> pages;
};

Opened openWithPages(const std::string& path) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    Opened o;
    o.trace = std::make_unique<Trace>(std::move(*trace));
    auto index = TraceIndex::load(*o.trace);
    REQUIRE(index.ok());
    o.index = std::make_unique<TraceIndex>(std::move(*index));
    o.pages = EventPageReader::open(*o.trace);
    REQUIRE(o.pages);
    return o;
}

/// A leaf of `table` after its first (a b-tree of two levels).
uint32_t secondLeafOf(const std::string& path, const char* table) {
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
    uint32_t root = 0;
    {
        schema::Statement s(db, std::string("SELECT rootpage FROM sqlite_master WHERE name = '") + table + "'");
        REQUIRE(s.step());
        root = uint32_t(s.int64(0));
    }
    sqlite3_close(db);
    schema::pages::PageFile f;
    REQUIRE(f.open(path, O_RDONLY).ok());
    const uint8_t* p = f.page(root, 0);
    REQUIRE(p);
    REQUIRE(p[0] == schema::pages::kInteriorTable);
    REQUIRE(schema::pages::get16(p + 3) >= 1);
    return schema::pages::get32(p + 8); // the right-most child: a leaf after the first

}

/// `junk` written at `offset` into the second leaf of `table` (secondLeafOf): that leaf's page
/// number; `pageSize` set to the file's.
uint32_t damageSecondLeaf(const std::string& path, const char* table, const std::string& junk, uint32_t offset,
                          uint32_t& pageSize) {
    const uint32_t leaf = secondLeafOf(path, table);
    {
        schema::pages::PageFile f;
        REQUIRE(f.open(path, O_RDONLY).ok());
        pageSize = f.pageSize;
    }
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(std::streamoff(leaf - 1) * pageSize + offset);
    f.write(junk.data(), std::streamsize(junk.size()));
    return leaf;
}

} // namespace

TEST_CASE("events read below SQL equal those SQL gives", "[analyzer][event_pages]") {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    requireSame(path);
    // With the detail columns asked for every category (a data family's view).
    const std::vector<uint8_t> all(256, 1);
    requireSame(path, &all);
    // The reader got through every track's range itself.
    const Opened o = openWithPages(path);
    const auto& index = o.index;
    const auto& pages = o.pages;
    int64_t events = 0;
    for (const TrackInfo& t : index->tracks()) {
        if (!t.firstEventId) continue;
        EventRecord e;
        const auto stop = pages->scan(*t.firstEventId, *t.lastEventId, t.id, e, [&](const EventRecord&) { ++events; });
        CHECK(stop.resumeFrom == *t.lastEventId + 1);
        CHECK(stop.damage.ok());
    }
    CHECK(events == index->eventCount());
}

TEST_CASE("events of the real Kineto traces read below SQL equal those SQL gives", "[analyzer][event_pages]") {
    test::TempDir dir;
    auto path = test::importRealKineto(dir);
    if (!path) return;
    requireSame(*path);
}

TEST_CASE("records the reader does not handle are read through SQL from there on", "[analyzer][event_pages]") {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    // A real where an integer belongs (read as SQLite converts it), text, and a record that
    // overflows its page (a long value in a column the scan does not read).
    exec(path, "UPDATE event SET dur = 2.75 WHERE id = 101;"
               "UPDATE event SET ts = -7.5e30 WHERE id = 102;"
               "UPDATE event SET bytes = 'many' WHERE id = 1500;"
               "UPDATE event SET offset = zeroblob(200000) WHERE id = 2500;");
    requireSame(path);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    auto index = TraceIndex::load(*trace);
    REQUIRE(index.ok());
    const TrackInfo* main = nullptr;
    for (const TrackInfo& t : index->tracks())
        if (t.firstEventId && *t.firstEventId <= 1500 && *t.lastEventId >= 2500) main = &t;
    REQUIRE(main);
    const auto pages = EventPageReader::open(*trace);
    REQUIRE(pages);
    EventRecord e;
    std::vector<int64_t> seen;
    const auto stop = pages->scan(*main->firstEventId, *main->lastEventId, main->id, e,
                                     [&](const EventRecord& r) {
                                         if (r.id == 101) CHECK(r.dur == 2);
                                         if (r.id == 102) CHECK(r.ts == INT64_MIN);
                                         seen.push_back(r.id);
                                     });
    CHECK(stop.resumeFrom == 1500); // the reals were read, the text was not
    CHECK(stop.damage.ok());
    REQUIRE_FALSE(seen.empty());
    CHECK(seen.back() < 1500);
    const auto after = pages->scan(1501, *main->lastEventId, main->id, e, [](const EventRecord&) {});
    CHECK(after.resumeFrom == 2500); // the overflowing record
    CHECK(after.damage.ok());
}

TEST_CASE("a scan of some categories gives the full scan's events of those categories", "[analyzer][event_pages]") {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    const int64_t nvtx = int64_t(Category::Nvtx), compute = int64_t(Category::ComputeRange);
    // A category stored as a real (decoded as SQLite converts it), one past 255, and a real
    // depth in an event the filter keeps.
    exec(path, ("UPDATE event SET category_id = " + std::to_string(nvtx) + ".0 WHERE id = 7;"
               "UPDATE event SET category_id = 300 WHERE id = 8;"
               "UPDATE event SET depth = 2.5 WHERE id = 13;").c_str());
    EventPageReader::Categories wanted;
    wanted.set(size_t(nvtx)).set(size_t(compute));
    int64_t firstLast = 0; // the last id of the track holding event 1
    { // the reader of this trace closed before it is changed again
        const Opened o = openWithPages(path);
        const auto& index = o.index;
        const auto& pages = o.pages;
        size_t kept = 0;
        for (const TrackInfo& t : index->tracks()) {
            if (!t.firstEventId) continue;
            EventRecord e;
            std::vector<Row> all, some;
            auto row = [](const EventRecord& r) {
                return Row(r.id, r.ts, r.dur, r.bytes, r.seq, r.communicatorId, r.objectId, r.correlationId, r.nameId,
                           r.peer, r.depth, r.categoryId, r.count, int(r.cls));
            };
            const auto full = pages->scan(*t.firstEventId, *t.lastEventId, t.id, e, [&](const EventRecord& r) {
                if (r.categoryId == nvtx || r.categoryId == compute) all.push_back(row(r));
            });
            const auto filtered = pages->scan(*t.firstEventId, *t.lastEventId, t.id, &wanted, e,
                                              [&](const EventRecord& r) { some.push_back(row(r)); });
            CHECK(filtered.resumeFrom == full.resumeFrom);
            CHECK(some == all);
            kept += some.size();
            if (*t.firstEventId == 1) firstLast = *t.lastEventId;
        }
        CHECK(kept > 600);
    }
    REQUIRE(firstLast > 3);
    // Text in an event the filter passes over does not stop it; one it keeps does.
    exec(path, ("UPDATE event SET ts = 'soon' WHERE id = 3 AND category_id NOT IN (" + std::to_string(nvtx) + ", " +
                   std::to_string(compute) + ");"
               "UPDATE event SET ts = 'later' WHERE id = 1;").c_str());
    auto again = Trace::open(path);
    REQUIRE(again.ok());
    const auto pagesAgain = EventPageReader::open(*again);
    REQUIRE(pagesAgain);
    auto indexAgain = TraceIndex::load(*again);
    REQUIRE(indexAgain.ok());
    const int64_t track = indexAgain->tracks().front().id;
    EventRecord e;
    CHECK(pagesAgain->scan(1, firstLast, track, &wanted, e, [](const EventRecord&) {}).resumeFrom == 1);
    CHECK(pagesAgain->scan(2, firstLast, track, &wanted, e, [](const EventRecord&) {}).resumeFrom == firstLast + 1);
}

TEST_CASE("a WAL trace is read through SQL only", "[analyzer][event_pages]") {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    const Scanned before = scanAll(path, false);
    exec(path, "PRAGMA journal_mode=WAL; UPDATE event SET dur = dur + 1 WHERE id = 3;");
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    CHECK_FALSE(EventPageReader::open(*trace)); // its newest pages may be in the WAL
    const Scanned after = scanAll(path, false);
    REQUIRE(after.rows.size() == before.rows.size());
    CHECK(std::get<2>(after.rows[2]) == std::get<2>(before.rows[2]) + 1);
}

namespace {

struct DamagedScans {
    Scanned sql, below;
    std::string what; ///< both results in words
};

/// Both ways of reading a copy of the varied trace whose second event leaf has `junk` written at
/// `offset` into the page.
DamagedScans scanDamaged(const std::string& junk, uint32_t offset) {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    uint32_t pageSize = 0;
    const uint32_t leaf = damageSecondLeaf(path, "event", junk, offset, pageSize);
    DamagedScans s{scanAll(path, false), scanAll(path, true), {}};
    std::ostringstream what; // said with any failure (one was seen in a full parallel run, never again)
    what << "leaf " << leaf << " of pages of " << pageSize << " bytes; SQL: " << s.sql.rows.size() << " rows, "
         << (s.sql.ok ? "no error" : s.sql.error) << "; below SQL: " << s.below.rows.size() << " rows ("
         << s.below.rowsBeforeError << " before the error), " << (s.below.ok ? "no error" : s.below.error);
    s.what = what.str();
    return s;
}

/// What the reader gave up to the damaged page is what SQL gave.
void requireSamePrefix(const DamagedScans& s) {
    const size_t n = s.below.rowsBeforeError;
    REQUIRE(n > 0);
    REQUIRE(s.sql.rows.size() >= n);
    for (size_t i = 0; i < n; ++i) REQUIRE(s.below.rows[i] == s.sql.rows[i]);
}

} // namespace

TEST_CASE("a damaged event page is an error through both ways, never a crash", "[analyzer][event_pages]") {
    // A page type no b-tree has: SQLite checks it whenever it loads the page.
    const DamagedScans s = scanDamaged(std::string(1, '\x42'), 0);
    INFO(s.what);
    CHECK_FALSE(s.sql.ok);
    CHECK_FALSE(s.below.ok);
    CHECK_THAT(s.below.error, Catch::Contains("damaged trace: the event table"));
    requireSamePrefix(s);
}

TEST_CASE("cell pointers past the page are an error below SQL, never read on through SQL", "[analyzer][event_pages]") {
    // SQLite masks a cell offset into the page, so what its scan makes of these pointers depends on
    // the bytes past the page in its cache: only "no crash" is asked of it here.
    const DamagedScans s = scanDamaged(std::string(64, '\xff'), 8);
    INFO(s.what);
    CHECK_FALSE(s.below.ok);
    // Not read on through SQL past the damage: a look-up of the next id steps over the damaged
    // cells.
    CHECK_THAT(s.below.error, Catch::Contains("damaged trace: the event table"));
    requireSamePrefix(s);
}

namespace {

/// The (event id, tag) rows of event_detail with a tag in [first, last]: below SQL as far as the
/// reader gets, then through SQL, as the communication pass reads them; "" or the error.
std::string tagsBothWays(const std::string& path, int64_t first, int64_t last,
                         std::vector<std::pair<int64_t, int64_t>>& tags, bool& usedPages) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    const auto pages = detail::IntegerColumnPages::open(*trace, "event_detail", "event_id", {"tag"});
    usedPages = pages != nullptr;
    int64_t from = first;
    if (pages) {
        const auto stop = pages->scan(first, last, [&](int64_t id, const int64_t* v, const bool* null) {
            if (!null[0]) tags.emplace_back(id, v[0]);
        });
        if (!stop.damage.ok()) return stop.damage.message();
        from = stop.resumeFrom;
    }
    schema::Statement s(detail::db(*trace), "SELECT event_id, tag FROM event_detail WHERE event_id BETWEEN ?1 AND ?2"
                                            " AND tag IS NOT NULL");
    s.bind(1, from);
    s.bind(2, last);
    while (s.step()) tags.emplace_back(s.int64(0), s.int64(1));
    return s.error().ok() ? std::string() : s.error().message();
}

std::vector<std::pair<int64_t, int64_t>> tagsBySql(const std::string& path) {
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    schema::Statement s(detail::db(*trace), "SELECT event_id, tag FROM event_detail WHERE tag IS NOT NULL ORDER BY event_id");
    std::vector<std::pair<int64_t, int64_t>> out;
    while (s.step()) out.emplace_back(s.int64(0), s.int64(1));
    return out;
}

} // namespace

TEST_CASE("message tags read below SQL equal those SQL gives", "[analyzer][event_pages]") {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    // A NULL tag (skipped), a real one (truncated as SQLite converts it), a negative one.
    exec(path, "UPDATE event_detail SET tag = NULL WHERE event_id = (SELECT MIN(event_id) FROM event_detail);"
               "UPDATE event_detail SET tag = 41.75 WHERE event_id = (SELECT MAX(event_id) FROM event_detail);"
               "INSERT OR REPLACE INTO event_detail(event_id, tag) VALUES (5, -3);");
    const auto expected = tagsBySql(path);
    REQUIRE(expected.size() > 500);
    CHECK(expected.back().second == 41);
    std::vector<std::pair<int64_t, int64_t>> tags;
    bool usedPages = false;
    CHECK(tagsBothWays(path, 1, INT64_MAX, tags, usedPages).empty());
    CHECK(usedPages);
    CHECK(tags == expected);
    // Text in a tag: the reader stops there and SQL reads on, with the same rows.
    const int64_t middle = expected[expected.size() / 2].first;
    exec(path, ("UPDATE event_detail SET tag = 'x' WHERE event_id = " + std::to_string(middle)).c_str());
    const auto withText = tagsBySql(path);
    tags.clear();
    CHECK(tagsBothWays(path, 1, INT64_MAX, tags, usedPages).empty());
    CHECK(tags == withText);
}

TEST_CASE("a damaged event_detail page is an error naming the table", "[analyzer][event_pages]") {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    // Rows enough for a b-tree of two levels.
    exec(path, "WITH RECURSIVE n(i) AS (SELECT 100000 UNION ALL SELECT i + 1 FROM n WHERE i < 130000)"
               " INSERT INTO event_detail(event_id, tag) SELECT i, i % 97 FROM n;");
    uint32_t pageSize = 0;
    damageSecondLeaf(path, "event_detail", std::string(1, '\x42'), 0, pageSize); // no b-tree page has this type
    std::vector<std::pair<int64_t, int64_t>> tags;
    bool usedPages = false;
    CHECK_THAT(tagsBothWays(path, 1, INT64_MAX, tags, usedPages), Catch::Contains("damaged trace: the event_detail table"));
}

TEST_CASE("event_detail is read through SQL only where its layout is not the expected one", "[analyzer][event_pages]") {
    test::TempDir dir;
    const std::string path = buildVaried(dir);
    auto trace = Trace::open(path);
    REQUIRE(trace.ok());
    CHECK(detail::IntegerColumnPages::open(*trace, "event_detail", "event_id", {"tag"}));
    CHECK_FALSE(detail::IntegerColumnPages::open(*trace, "event_detail", "event_id", {"message_tag"}));
    CHECK_FALSE(detail::IntegerColumnPages::open(*trace, "event_detail", "fd", {"tag"})); // not the rowid
    CHECK_FALSE(detail::IntegerColumnPages::open(*trace, "no_such_table", "event_id", {"tag"}));
}

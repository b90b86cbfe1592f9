// SPDX-License-Identifier: MIT
// TraceWriter writes events in multi-row batches whose INSERT names only the columns the batch
// uses (by row shape); rows of mixed shapes, depths and tracks must keep their ids, their order
// and every column exactly, whichever batch statement or single-row path wrote them. The same rows
// written below SQL (TraceWriterOptions::eventPages: packed into SQLite's pages) must read back
// the same, pass SQLite's integrity check, and settle into the tables mid-way when asked.
#include <catch2/catch.hpp>

#include <fstream>
#include <random>
#include <vector>

#include "hpcprof/schema/sqlite.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"
#include "hpcprof/store/trace_writer.hpp"
#include "store/event_pages.hpp"

using namespace hpcprof;
using store::EventDetail;
using store::EventRow;

namespace {

struct Written {
    EventRow row;
    EventDetail detail;
    int64_t id = 0;
};

/// A row on `track` with each optional column set or not as `shape`'s bits say.
EventRow makeRow(int64_t track, int64_t i, unsigned shape, int64_t depth) {
    EventRow r;
    r.trackId = track;
    r.ts = (int64_t(1) << 40) + i * 1000; // 6-byte integers
    r.dur = i % 7 == 0 ? 0 : 100 + i;
    r.categoryId = 1 + i % 5;
    r.nameId = 1 + i % 3;
    r.depth = depth;
    if (shape & 1) r.bytes = i % 11 == 0 ? 0 : 4096 * i;
    if (shape & 2) r.objectId = 1 + i % 4;
    if (shape & 4) r.peer = i % 9;
    if (shape & 8) r.communicatorId = 1 + i % 2;
    if (shape & 16) r.seq = i % 13 == 0 ? INT64_MAX - i : i; // 8-byte integers too
    if (shape & 32) r.correlationId = -i; // negative values survive too
    if (shape & 64) r.count = 2 + i % 3;
    return r;
}

void requireColumn(const schema::Statement& q, int col, const std::optional<int64_t>& v,
                   int64_t id) {
    INFO("event " << id << " column " << col);
    if (v) {
        REQUIRE_FALSE(q.isNull(col));
        REQUIRE(q.int64(col) == *v);
    } else {
        REQUIRE(q.isNull(col));
    }
}

} // namespace

std::string integrity(sqlite3* db) {
    schema::Statement st(db, "PRAGMA integrity_check");
    return st.step() ? st.text(0) : "no answer";
}

TEST_CASE("events of mixed shapes, depths and tracks keep their ids, order and every column",
          "[store][writer]") {
    const bool eventPages = GENERATE(false, true);
    INFO("event pages " << eventPages);
    test::TempDir dir;
    std::string path = dir / "t.hpcprof";
    // Track sizes around the batch size: full batches, tails, a batch across two tracks.
    const int64_t batch = int64_t(store::TraceWriter::kEventBatch);
    const int64_t sizes[5] = {2 * batch + batch / 3, 3 * batch + 17, batch / 2, batch + batch / 4,
                              4 * batch};
    std::vector<Written> written;
    {
        auto w = store::TraceWriter::create(path, {eventPages});
        REQUIRE(w.ok());
        store::TraceWriter& tw = w.value();
        store::ProcessRow p;
        p.id = 1;
        p.pid = 100;
        REQUIRE(tw.insertProcess(p).ok());
        int64_t thread = tw.insertThread(1, 100, "main");
        std::vector<int64_t> tracks;
        for (int t = 0; t < 5; ++t)
            tracks.push_back(tw.insertTrack(1, thread, "cpu_thread", "t" + std::to_string(t), {}, {}));
        std::mt19937 rng(7);
        int64_t i = 0;
        // like: 1 = the category and name of a loop of like calls (bound once per batch),
        // 2 = one category, names that differ, 3 = one name, categories that differ.
        auto add = [&](int64_t track, unsigned shape, int64_t depth, bool withDetail,
                       int like = 0) {
            Written x;
            x.row = makeRow(track, i, shape, depth);
            if (like == 1 || like == 2) x.row.categoryId = 3;
            if (like == 1 || like == 3) x.row.nameId = 2;
            if (withDetail) { // details of several shapes too
                if (i % 5 == 0)
                    x.detail.fd = i % 100;
                else
                    x.detail.offset = i * 512;
                if (i % 2) x.detail.errnoValue = 5;
                if (i % 7 == 0) x.detail.tag = -int64_t(i);
            }
            x.id = tw.insertEvent(x.row, x.detail);
            written.push_back(x);
            ++i;
        };
        auto finish = [&](int64_t track) {
            int64_t first = 0, last = 0, count = 0;
            for (const auto& x : written)
                if (x.row.trackId == track) {
                    if (!count) first = x.id;
                    last = x.id;
                    ++count;
                }
            REQUIRE(tw.finishTrack(track, first, last, count).ok());
        };
        // Track 0: the common I/O shape (bytes, object; depth 0): two full batches and a tail.
        for (int64_t k = 0; k < sizes[0]; ++k) add(tracks[0], 3, 0, k % 3 == 0);
        finish(tracks[0]);
        // Track 1: every shape at random, nested depths, some rows with every column set.
        for (int64_t k = 0; k < sizes[1]; ++k)
            add(tracks[1], k % 50 == 0 ? 127u : unsigned(rng() % 128), int64_t(rng() % 4),
                rng() % 4 == 0);
        finish(tracks[1]);
        // Tracks 2 and 3 appended before either is finished: one batch spans both tracks.
        for (int64_t k = 0; k < sizes[2]; ++k) add(tracks[2], 1, 0, false);
        for (int64_t k = 0; k < sizes[3]; ++k)
            add(tracks[3], k < sizes[3] / 2 ? 0u : 96u, k % 2, false);
        finish(tracks[2]);
        finish(tracks[3]);
        // Track 4: a batch of like calls, then one category with names that differ, then one
        // name with categories that differ, then like calls again with one odd name in a batch.
        for (int64_t k = 0; k < sizes[4]; ++k) {
            int like = int(k / batch) + 1;
            add(tracks[4], 3, 0, false, like == 4 ? (k == 3 * batch + 100 ? 0 : 1) : like);
        }
        finish(tracks[4]);
        REQUIRE(tw.error().ok());
        REQUIRE(tw.finish().ok());
    }
    REQUIRE(int64_t(written.size()) == sizes[0] + sizes[1] + sizes[2] + sizes[3] + sizes[4]);
    for (size_t k = 0; k < written.size(); ++k) REQUIRE(written[k].id == int64_t(k) + 1);

    auto db = schema::openTraceReadOnly(path);
    REQUIRE(db.ok());
    REQUIRE(integrity(db.value().get()) == "ok");
    schema::Statement q(db.value().get(),
                        "SELECT id, track_id, ts, dur, category_id, name_id, depth, bytes, object_id,"
                        " peer, communicator_id, seq, correlation_id, count, offset FROM event ORDER BY id");
    size_t n = 0;
    while (q.step()) {
        REQUIRE(n < written.size());
        const Written& x = written[n++];
        const EventRow& e = x.row;
        INFO("event " << x.id);
        REQUIRE(q.int64(0) == x.id);
        REQUIRE(q.int64(1) == e.trackId);
        REQUIRE(q.int64(2) == e.ts);
        REQUIRE(q.int64(3) == e.dur);
        REQUIRE(q.int64(4) == e.categoryId);
        REQUIRE(q.int64(5) == e.nameId);
        REQUIRE(q.int64(6) == e.depth);
        requireColumn(q, 7, e.bytes, x.id);
        requireColumn(q, 8, e.objectId, x.id);
        requireColumn(q, 9, e.peer, x.id);
        requireColumn(q, 10, e.communicatorId, x.id);
        requireColumn(q, 11, e.seq, x.id);
        requireColumn(q, 12, e.correlationId, x.id);
        requireColumn(q, 13, e.count, x.id);
        requireColumn(q, 14, x.detail.offset, x.id); // the offset is a column of event
    }
    REQUIRE(q.error().ok());
    REQUIRE(n == written.size());

    schema::Statement d(db.value().get(),
                        "SELECT event_id, errno, fd, tag FROM event_detail ORDER BY event_id");
    size_t details = 0;
    for (const auto& x : written) {
        if (!x.detail.any()) continue;
        REQUIRE(d.step());
        ++details;
        REQUIRE(d.int64(0) == x.id);
        requireColumn(d, 1, x.detail.errnoValue, x.id);
        requireColumn(d, 2, x.detail.fd, x.id);
        requireColumn(d, 3, x.detail.tag, x.id);
    }
    REQUIRE_FALSE(d.step());
    REQUIRE(details > 4 * 128); // several full detail batches

    // Each track is the contiguous id range it was given.
    schema::Statement t(db.value().get(),
                        "SELECT first_event_id, last_event_id, event_count FROM track ORDER BY id");
    int64_t first = 1;
    for (int64_t size : sizes) {
        REQUIRE(t.step());
        REQUIRE(t.int64(0) == first);
        REQUIRE(t.int64(1) == first + size - 1);
        REQUIRE(t.int64(2) == size);
        first += size;
    }
    REQUIRE_FALSE(t.step());
}

TEST_CASE("event rows packed into pages settle into their tables mid-way, later ones go by SQL",
          "[store][writer]") {
    test::TempDir dir;
    std::string path = dir / "t.hpcprof";
    {
        auto w = store::TraceWriter::create(path, {true});
        REQUIRE(w.ok());
        store::TraceWriter& tw = w.value();
        const int64_t track = tw.insertTrack(1, std::nullopt, "cpu_thread", "t", {}, {});
        EventDetail failed;
        failed.errnoValue = 9;
        for (int64_t i = 0; i < 5000; ++i) tw.insertEvent(makeRow(track, i, 3, 0), i % 1000 ? EventDetail{} : failed);
        REQUIRE(tw.settleEvents().ok());
        // SQL sees them now (RDMA peers are derived with an UPDATE of event at this point).
        schema::Statement count(tw.db(), "SELECT COUNT(*), MAX(id), (SELECT COUNT(*) FROM event_detail) FROM event");
        REQUIRE(count.step());
        CHECK(count.int64(0) == 5000);
        CHECK(count.int64(1) == 5000);
        CHECK(count.int64(2) == 5);
        REQUIRE(schema::exec(tw.db(), "UPDATE event SET peer = 7 WHERE id = 2").ok());
        for (int64_t i = 5000; i < 5010; ++i) CHECK(tw.insertEvent(makeRow(track, i, 3, 0), failed) == i + 1);
        REQUIRE(tw.finishTrack(track, 1, 5010, 5010).ok());
        REQUIRE(tw.finish().ok());
    }
    test::TraceQuery q(path);
    CHECK(integrity(q.db()) == "ok");
    CHECK(q.rows("SELECT COUNT(*), MIN(id), MAX(id), SUM(peer IS NOT NULL), SUM(ts - 1099511627776) / 1000 FROM event") ==
          std::vector<std::string>{"5010|1|5010|1|12547545"});
    CHECK(q.scalar("SELECT COUNT(*) FROM event_detail WHERE errno = 9") == 15);
    CHECK(q.text("SELECT stat FROM sqlite_stat1 WHERE tbl = 'event'") == "5010");
}

TEST_CASE("event pages that cannot be appended are left out and replayed as the rows they hold",
          "[store][writer]") {
    test::TempDir dir;
    const std::string path = dir / "av.db";
    {
        // An auto-vacuum file: the page appender refuses it (its pointer map would go stale).
        sqlite3* raw = nullptr;
        REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
        schema::DbHandle db(raw);
        REQUIRE(schema::exec(raw, "PRAGMA page_size=65536; PRAGMA auto_vacuum=FULL;"
                                  " CREATE TABLE event(id INTEGER PRIMARY KEY, a, b, c, d, e, f, g, h, i, j, k, l, m, n);"
                                  " CREATE TABLE event_detail(event_id INTEGER PRIMARY KEY, errno, fd, tag);").ok());
    }
    auto pages = store::EventPages::create(dir.path(), 65536, 65536);
    REQUIRE(pages.ok());
    std::vector<EventRow> rows;
    for (int64_t i = 0; i < 3000; ++i) {
        rows.push_back(makeRow(7, i, unsigned(i % 128), i % 3));
        EventDetail d;
        d.tag = -i;
        REQUIRE(pages.value()->addEvent(i + 1, rows.back(), std::optional<int64_t>(i * 512)).ok());
        if (i % 100 == 0) REQUIRE(pages.value()->addDetail(i + 1, d).ok());
    }
    REQUIRE(pages.value()->flush().ok());
    const uint32_t roots[2] = {2, 3};
    bool failed[2] = {};
    std::string why;
    REQUIRE(pages.value()->write(path, roots, failed, why).ok());
    CHECK(failed[0]);
    CHECK(failed[1]);
    CHECK(why.find("auto-vacuum") != std::string::npos);
    int64_t n = 0;
    REQUIRE(pages.value()->replay(store::EventPages::Event, [&](int64_t rowid, const std::optional<int64_t>* c, size_t columns) {
        const EventRow& e = rows[size_t(n++)];
        REQUIRE(rowid == n);
        REQUIRE(columns == 15);
        REQUIRE_FALSE(c[0]);
        REQUIRE(std::vector<std::optional<int64_t>>(c + 1, c + 15) ==
                std::vector<std::optional<int64_t>>{e.trackId, e.ts, e.dur, e.categoryId, e.nameId, e.depth, e.bytes,
                                                    e.objectId, e.peer, e.communicatorId, e.seq, e.correlationId,
                                                    e.count, (rowid - 1) * 512});
        return Status();
    }).ok());
    CHECK(n == 3000);
    int64_t details = 0;
    REQUIRE(pages.value()->replay(store::EventPages::Detail, [&](int64_t rowid, const std::optional<int64_t>* c, size_t) {
        ++details;
        REQUIRE((!c[1] && !c[2] && c[3] == -(rowid - 1)));
        return Status();
    }).ok());
    CHECK(details == 30);
}

namespace {
/// This process's resident pages of mapped files (RssFile of /proc/self/status), in KiB.
int64_t residentFileKiB() {
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("RssFile:", 0) == 0) return std::stoll(line.substr(8));
    return -1;
}
} // namespace

TEST_CASE("the spilled leaves do not stay resident once read", "[store][event_pages]") {
    // A node's conversion reads its spilled leaves once: kept mapped, they made its resident
    // size grow with its events (2.7 GB at 62 M events).
    test::TempDir dir;
    auto pages = store::EventPages::create(dir.path(), 65536, 65536);
    REQUIRE(pages.ok());
    const int64_t events = 800'000; // about 36 MB of leaves
    for (int64_t i = 0; i < events; ++i)
        REQUIRE(pages.value()->addEvent(i + 1, makeRow(7, i, unsigned(i % 128), i % 3), std::nullopt).ok());
    REQUIRE(pages.value()->flush().ok());
    const int64_t before = residentFileKiB();
    REQUIRE(before >= 0);
    int64_t n = 0;
    REQUIRE(pages.value()->replay(store::EventPages::Event, [&](int64_t, const std::optional<int64_t>*, size_t) {
        ++n;
        return Status();
    }).ok());
    CHECK(n == events);
    const int64_t grown = residentFileKiB() - before;
    INFO("resident file pages grew by " << grown << " KiB");
    CHECK(grown < 4096);
}

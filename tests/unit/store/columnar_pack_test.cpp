// SPDX-License-Identifier: MIT
// The column-wise packed form (docs/trace-schema.md "Packed traces") gives back every event
// value exactly: extremes of int64 (whose deltas overflow), NULLs in every column, tracks whose
// times jump backwards, and more rows than one buffer of a column holds. A trace whose events
// hold a value that is not an integer is packed whole instead.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>

#include "hpcprof/schema/packed_trace.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/store/trace_writer.hpp"
#include "process_runner.hpp"
#include "schemas/src/temp_file.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// Event `i` of a track: values drawn from `rng`, some of them int64 extremes.
void fillRow(int64_t i, int64_t track, std::mt19937_64& rng, store::EventRow& r, store::EventDetail& d) {
    const int64_t extremes[] = {kMin, kMax, -1, 0, 1, kMin + 1, kMax - 1};
    r.trackId = track;
    r.ts = i % 1000 == 999 ? extremes[size_t(i) % 7] : int64_t(rng() >> 20); // jumps both ways
    r.dur = int64_t(rng() % 20000);
    r.categoryId = 1 + int64_t(rng() % 3);
    r.nameId = 1 + int64_t(rng() % 90);
    r.depth = i % 5 == 0 ? 1 : 0;
    if (i % 3) r.bytes = i % 97 == 0 ? extremes[size_t(i) % 7] : int64_t(rng() % 100000);
    if (i % 4) r.objectId = 1 + int64_t(rng() % 200);
    if (i % 11 == 0) r.peer = extremes[size_t(i) % 7];
    if (i % 13 == 0) r.seq = i;
    if (i % 17 == 0) r.correlationId = extremes[size_t(i / 17) % 7];
    if (i % 19 == 0) r.count = 2;
    if (i % 2) d.offset = i % 101 == 1 ? extremes[size_t(i) % 7] : int64_t(rng() >> 34);
    if (i % 23 == 0) d.errnoValue = 5;
}

/// A trace of `n` events on two tracks, with values from the whole int64 range.
void writeTrace(const std::string& path, int64_t n) {
    auto w = store::TraceWriter::create(path);
    REQUIRE(w.ok());
    store::TraceWriter& tw = w.value();
    store::ProcessRow p;
    p.id = 1;
    p.pid = 7;
    REQUIRE(tw.insertProcess(p).ok());
    int64_t thread = tw.insertThread(1, 7, "main");
    std::mt19937_64 rng(25);
    for (int64_t track : {tw.insertTrack(1, thread, "cpu_thread", "a", {}, {}),
                          tw.insertTrack(1, thread, "cpu_thread", "b", {}, {})}) {
        int64_t first = 0, last = 0;
        for (int64_t i = 0; i < n; ++i) {
            store::EventRow r;
            store::EventDetail d;
            fillRow(i, track, rng, r, d);
            int64_t id = tw.insertEvent(r, d);
            if (i == 0) first = id;
            last = id;
        }
        REQUIRE(tw.finishTrack(track, first, last, n).ok());
    }
    REQUIRE(tw.error().ok());
    REQUIRE(tw.finish().ok());
}

std::vector<std::string> allEvents(const std::string& path) {
    test::TraceQuery q(path);
    return q.rows("SELECT * FROM main.event ORDER BY id");
}

} // namespace

TEST_CASE("the column-wise packed form gives back every event value exactly", "[store][pack]") {
    test::TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "t.hpcprof.zst";
    writeTrace(plain, 150'000); // more than one 64 KiB buffer per column
    auto form = schema::packTraceFile(plain, packed, 3, 0);
    REQUIRE(form.ok());
    CHECK(form.value() == schema::PackForm::Columns);
    auto unpacked = schema::unpackIfPacked(packed);
    INFO((unpacked ? std::string() : unpacked.status().message()));
    REQUIRE(unpacked.ok());
    REQUIRE(unpacked.value());
    const auto want = allEvents(plain);
    REQUIRE(want.size() == 300'000);
    const auto got = allEvents(unpacked.value()->path());
    REQUIRE(got.size() == want.size());
    size_t differ = 0; // the first row that differs, printed alone (the whole table is too long)
    while (differ < want.size() && got[differ] == want[differ]) ++differ;
    if (differ < want.size()) CHECK(got[differ] == want[differ]);
    CHECK(differ == want.size());
    test::TraceQuery a(plain), b(unpacked.value()->path());
    for (const char* sql : {"SELECT * FROM event_detail ORDER BY event_id", "SELECT * FROM track ORDER BY id",
                            "SELECT * FROM string ORDER BY id", "PRAGMA main.user_version"})
        CHECK(b.rows(sql) == a.rows(sql));
}

TEST_CASE("a trace whose events hold a non-integer value is packed whole", "[store][pack]") {
    test::TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "t.hpcprof.zst";
    writeTrace(plain, 100);
    {
        sqlite3* raw = nullptr;
        REQUIRE(sqlite3_open_v2(plain.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
        schema::DbHandle db(raw);
        REQUIRE(schema::exec(db.get(), "UPDATE event SET bytes = 1.5 WHERE id = 3").ok());
    }
    auto form = schema::packTraceFile(plain, packed, 3, 0);
    REQUIRE(form.ok());
    CHECK(form.value() == schema::PackForm::Whole);
    auto unpacked = schema::unpackIfPacked(packed);
    REQUIRE(unpacked.ok());
    REQUIRE(unpacked.value());
    CHECK(allEvents(unpacked.value()->path()) == allEvents(plain));
}

namespace {
/// Sets TMPDIR for one scope and puts back what it was.
struct ScopedTmpdir {
    std::optional<std::string> before;
    explicit ScopedTmpdir(const std::string& dir) {
        if (const char* b = std::getenv("TMPDIR")) before = b;
        ::setenv("TMPDIR", dir.c_str(), 1);
    }
    ~ScopedTmpdir() {
        if (before) ::setenv("TMPDIR", before->c_str(), 1);
        else ::unsetenv("TMPDIR");
    }
};

/// The folder the file open as `fd` is (or was, before it was removed) in.
std::string folderOf(int fd) {
    std::error_code ec;
    std::string target = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), ec).string();
    return target.substr(0, target.rfind('/'));
}
} // namespace

TEST_CASE("pack's temporary files, named or not, are made in TMPDIR", "[store][pack]") {
    test::TempDir dir;
    ScopedTmpdir tmpdir(dir.path().string());
    std::string path;
    const int fd = schema::tempfile::named("hpcprof-test", path);
    REQUIRE(fd >= 0);
    CHECK(fs::path(path).parent_path() == dir.path());
    CHECK(folderOf(fd) == dir.path().string());
    ::close(fd);
    std::FILE* f = schema::tempfile::anonymous(); // std::tmpfile() would be in /tmp
    REQUIRE(f);
    CHECK(folderOf(::fileno(f)) == dir.path().string());
    std::fclose(f);
}

TEST_CASE("a TMPDIR that cannot hold pack's temporary files is named in the error", "[store][pack]") {
    test::TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "t.hpcprof.zst";
    writeTrace(plain, 100);
    const std::string missing = dir / "no-such-folder";
    ScopedTmpdir tmpdir(missing);
    auto form = schema::packTraceFile(plain, packed, 3, 0);
    REQUIRE_FALSE(form.ok());
    CHECK_THAT(form.status().message(), Catch::Contains("temporary file in " + missing + " (TMPDIR)"));
    CHECK_FALSE(fs::exists(packed));
}

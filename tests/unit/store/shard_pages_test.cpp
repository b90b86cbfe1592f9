// SPDX-License-Identifier: MIT
// The event rows written below SQL (store/shard_pages.hpp) against what SQLite writes for the same
// INSERT ... SELECT: small pages (512 bytes) so that 30,000 rows need two levels of interior
// pages, values of every integer width and sign, NULLs, text and reals in copied columns, ids
// mapped (and missing from the map: NULL), rows appended from two shards in two ranges each; and
// SQLite's lock-byte page (at 1 GiB) moved into the appended pages, where no b-tree may use it.
// The file must pass SQLite's integrity check and hold the rows SQL gives, value and type.
#include <catch2/catch.hpp>

#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "hpcprof/schema/sqlite.hpp"
#include "process_runner.hpp"
#include "store/direct_io.hpp"
#include "store/shard_pages.hpp"
#include "store/table_pages.hpp"

using namespace hpcprof;
using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTable = "CREATE TABLE ev (id INTEGER PRIMARY KEY, track INTEGER NOT NULL, ts INTEGER,"
                               " name_id INTEGER, note, x REAL);";

schema::DbHandle openDb(const fs::path& path, int pageSize = 512) {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(path.c_str(), &raw) == SQLITE_OK);
    schema::DbHandle db(raw);
    REQUIRE(schema::exec(raw, "PRAGMA page_size = " + std::to_string(pageSize) + "; PRAGMA journal_mode = OFF;").ok());
    return db;
}

/// A shard of `rows` rows whose values cover every serial type, one- and two-byte ones.
void makeShard(const fs::path& path, int64_t rows, int64_t seed, int pageSize = 512) {
    auto db = openDb(path, pageSize);
    REQUIRE(schema::exec(db.get(), std::string(kTable) + "BEGIN;").ok());
    schema::Statement ins(db.get(), "INSERT INTO ev VALUES (?, ?, ?, ?, ?, ?)");
    for (int64_t i = 1; i <= rows; ++i) {
        static constexpr int64_t kWidths[] = {0, 1, -1, 127, -128, 200, 40000, -9000000, 3'000'000'000,
                                              -200'000'000'000'000, INT64_MAX / 4};
        const int64_t w = kWidths[(i + seed) % 11];
        ins.bind(1, i);
        ins.bind(2, (i * 7 + seed) % 300 - 20);
        if (i % 13 == 0) ins.bindNull(3);
        else ins.bind(3, w + i);
        ins.bind(4, (i + seed) % 9); // ids 0..8; the map lacks 4
        // Text of 70 bytes has a two-byte serial type: the record takes the general rewrite.
        if (i % 17 == 0) ins.bind(5, std::string(70, char('a' + i % 26)));
        else if (i % 19 == 0) ins.bind(5, std::string(20, char('a' + i % 26))); // one-byte type, 20 bytes
        else if (i % 3 == 0) ins.bind(5, std::string_view("text row"));
        else ins.bind(5, w);
        ins.bind(6, double(i) / 3.0);
        REQUIRE(ins.run().ok());
    }
    REQUIRE(schema::exec(db.get(), "COMMIT").ok());
}

/// The rows of `sql` on the file `path`, columns joined with '|'.
std::vector<std::string> rows(const fs::path& path, const std::string& sql) {
    auto db = openDb(path);
    schema::Statement st(db.get(), sql);
    std::vector<std::string> out;
    while (st.step()) {
        std::string row;
        for (int i = 0; i < sqlite3_column_count(st.get()); ++i) row += (i ? "|" : "") + st.text(i);
        out.push_back(row);
    }
    REQUIRE(st.error().ok());
    return out;
}

std::string text(const fs::path& path, const std::string& sql) {
    auto r = rows(path, sql);
    return r.empty() ? std::string() : r.front();
}

uint32_t rootOf(const fs::path& path) {
    return uint32_t(std::stoll(text(path, "SELECT rootpage FROM sqlite_schema WHERE name = 'ev'")));
}

/// SQLite's lock-byte offset moved for the test's files (SQLITE_TESTCTRL_PENDING_BYTE), put back
/// after.
struct PendingByte {
    explicit PendingByte(uint64_t at) : old(sqlite3_test_control(SQLITE_TESTCTRL_PENDING_BYTE, unsigned(at))) {}
    ~PendingByte() { sqlite3_test_control(SQLITE_TESTCTRL_PENDING_BYTE, old); }
    unsigned old;
};

} // namespace

TEST_CASE("event rows written below SQL are the rows INSERT ... SELECT gives", "[store][shards]") {
    // SQLite's default, or 512-byte page 150 + 1: past the first shard's pages, among the appended.
    const uint64_t pending = GENERATE(uint64_t(0x40000000), uint64_t(512 * 150));
    // One window per run, or windows of 1,000 rows packed by one or three threads.
    const auto [windowRows, threads] = GENERATE(std::pair<int64_t, unsigned>{0, 1}, std::pair<int64_t, unsigned>{1'000, 1},
                                                std::pair<int64_t, unsigned>{777, 3});
    INFO("window rows " << windowRows << ", threads " << threads);
    const PendingByte moved(pending);
    TempDir dir;
    const fs::path a = dir.path() / "a.db", b = dir.path() / "b.db", pages = dir.path() / "pages.db",
                   sql = dir.path() / "sql.db";
    makeShard(a, 20'000, 0);
    makeShard(b, 10'000, 5);
    const std::vector<int64_t> map = {-1, 10, 11, 1'000'000, -1, 70'000, 2, 3, 4};
    using Op = store::ColumnOp;
    const std::vector<Op> ops = {{}, {Op::Kind::Add, 1'000, nullptr}, {Op::Kind::Add, -5'000'000'000, nullptr},
                                 {Op::Kind::Map, 0, &map}, {}, {}};
    // (shard, first, last, rowid offset): rowids grow across the four runs.
    struct Run { fs::path shard; int64_t first, last, offset; };
    const std::vector<Run> runs = {{a, 1, 12'000, 0}, {b, 1, 10'000, 12'000}, {a, 12'001, 20'000, 10'000},
                                   {b, 3, 2, 40'000}};
    for (const auto& p : {pages, sql}) {
        auto db = openDb(p);
        REQUIRE(schema::exec(db.get(), std::string(kTable) + "CREATE TABLE other (v); INSERT INTO other VALUES (1);").ok());
    }
    {
        auto db = openDb(sql);
        REQUIRE(schema::exec(db.get(), "CREATE TEMP TABLE m (old INTEGER PRIMARY KEY, new);").ok());
        for (size_t i = 0; i < map.size(); ++i)
            if (map[i] >= 0)
                REQUIRE(schema::exec(db.get(), "INSERT INTO m VALUES (" + std::to_string(i) + ", " +
                                                   std::to_string(map[i]) + ")").ok());
        for (const auto& r : runs) {
            REQUIRE(schema::exec(db.get(), "ATTACH '" + r.shard.string() + "' AS s").ok());
            REQUIRE(schema::exec(db.get(), "INSERT INTO main.ev SELECT e.id + " + std::to_string(r.offset) +
                                               ", track + 1000, ts - 5000000000, (SELECT new FROM m WHERE old = e.name_id),"
                                               " note, x FROM s.ev e WHERE e.id BETWEEN " + std::to_string(r.first) +
                                               " AND " + std::to_string(r.last) + " ORDER BY e.id").ok());
            REQUIRE(schema::exec(db.get(), "DETACH s").ok());
        }
    }
    auto appender = store::TableAppender::open(pages, rootOf(pages), pending, windowRows);
    INFO(appender.status().message());
    REQUIRE(appender.ok());
    for (const auto& r : runs) {
        Status s = appender->append(r.shard, rootOf(r.shard), r.first, r.last, r.offset, ops, threads);
        INFO(s.message());
        REQUIRE(s.ok());
    }
    REQUIRE(appender->finish().ok());
    CHECK(appender->rows() == 30'000);

    CHECK(text(pages, "PRAGMA integrity_check") == "ok");
    CHECK(text(pages, "SELECT COUNT(*) FROM ev") == "30000");
    CHECK(text(pages, "SELECT v FROM other") == "1"); // the rest of the file as it was
    const std::string all = "SELECT id, track, ts, name_id, note, x, typeof(ts), typeof(name_id), typeof(note)"
                            " FROM ev ORDER BY id";
    CHECK(rows(pages, all) == rows(sql, all));
    // SQLite reads and writes it further.
    REQUIRE(schema::exec(openDb(pages).get(), "INSERT INTO ev(track) VALUES (5); DELETE FROM ev WHERE id % 2 = 0;").ok());
    CHECK(text(pages, "PRAGMA integrity_check") == "ok");
}

TEST_CASE("the rows written below SQL make the same file whatever the number of threads", "[store][shards]") {
    TempDir dir;
    const fs::path a = dir.path() / "a.db";
    makeShard(a, 20'000, 3);
    const std::vector<int64_t> map = {5, 4, 3, 2, 1, 0, 9, 8, 7};
    using Op = store::ColumnOp;
    const std::vector<Op> ops = {{}, {Op::Kind::Add, 70'000, nullptr}, {}, {Op::Kind::Map, 0, &map}, {}, {}};
    auto merged = [&](unsigned threads) {
        const fs::path out = dir.path() / ("out" + std::to_string(threads) + ".db");
        REQUIRE(schema::exec(openDb(out).get(), kTable).ok());
        auto appender = store::TableAppender::open(out, rootOf(out), 0x40000000, 500);
        REQUIRE(appender.ok());
        REQUIRE(appender->append(a, rootOf(a), 1, 9'000, 0, ops, threads).ok());
        REQUIRE(appender->append(a, rootOf(a), 9'001, 20'000, 100, ops, threads).ok());
        REQUIRE(appender->finish().ok());
        CHECK(appender->rows() == 20'000);
        CHECK(text(out, "PRAGMA integrity_check") == "ok");
        std::ifstream in(out, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    const std::string one = merged(1);
    CHECK(merged(2) == one);
    CHECK(merged(5) == one);
}

/// `path`'s pages dropped from the page cache where the file system lets them go.
void dropFromCache(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

/// Whether `dir`'s file system takes an aligned O_DIRECT write.
bool directWritesWork(const fs::path& dir) {
    const fs::path probe = dir / "probe";
    const int fd = ::open(probe.c_str(), O_CREAT | O_WRONLY | O_DIRECT | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    void* buf = nullptr;
    bool ok = posix_memalign(&buf, 4096, 4096) == 0;
    if (ok) {
        std::memset(buf, 1, 4096);
        ok = pwrite(fd, buf, 4096, 0) == 4096;
    }
    std::free(buf);
    ::close(fd);
    fs::remove(probe);
    return ok;
}

TEST_CASE("leaves written and shards read past the page cache make the file buffered I/O makes", "[store][shards]") {
    TempDir dir;
    const fs::path a = dir.path() / "a.db";
    // About 3.5 MB of leaves in windows of 50,000 rows: stretches past DirectWriter::kMinBytes.
    makeShard(a, 100'000, 2, 4096);
    const std::vector<int64_t> map = {5, 4, -1, 2, 1, 0, 9, 8, 7};
    using Op = store::ColumnOp;
    const std::vector<Op> ops = {{}, {Op::Kind::Add, 70'000, nullptr}, {Op::Kind::Add, 3, nullptr},
                                 {Op::Kind::Map, 0, &map}, {}, {}};
    uint64_t preloaded = 0;
    auto merged = [&](bool direct, uint64_t& directBytes) {
        if (direct) ::unsetenv("HPCPROF_NO_DIRECT_IO");
        else ::setenv("HPCPROF_NO_DIRECT_IO", "1", 1);
        const fs::path out = dir.path() / (direct ? "direct.db" : "buffered.db");
        REQUIRE(schema::exec(openDb(out, 4096).get(), kTable).ok());
        const uint32_t root = rootOf(a);
        dropFromCache(a); // mostly out of the cache: its leaves are read past it, window by window
        auto appender = store::TableAppender::open(out, rootOf(out), 0x40000000, 50'000);
        REQUIRE(appender.ok());
        REQUIRE(appender->append(a, root, 1, 100'000, 0, ops, 2, store::readsPastCache(a)).ok());
        REQUIRE(appender->finish().ok());
        ::unsetenv("HPCPROF_NO_DIRECT_IO");
        directBytes = appender->directBytes();
        if (direct) preloaded = appender->preloadedPages();
        else CHECK(appender->preloadedPages() == 0);
        CHECK(appender->rows() == 100'000);
        CHECK(text(out, "PRAGMA integrity_check") == "ok");
        std::ifstream in(out, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    uint64_t direct = 0, buffered = 0;
    const std::string withDirect = merged(true, direct), withBuffered = merged(false, buffered);
    CHECK(buffered == 0);
    CHECK(withDirect.size() > (size_t(2) << 20));
    CHECK(withDirect == withBuffered);
    if (directWritesWork(dir.path())) {
        CHECK(direct > (size_t(1) << 20)); // the leaves but the first two went past the cache
        dropFromCache(a);
        if (store::cachedShare(a) < 0.5) CHECK(preloaded > 2 * 300); // 2 windows of > 300 leaves
        else WARN("this file system keeps the shard cached: its leaves were read through the cache");
    } else {
        WARN("this file system refuses O_DIRECT: only the buffered path was tried");
    }
}

TEST_CASE("a write the file system refuses direct is left to the caller, and direct writes stop", "[store][shards]") {
    TempDir dir;
    const fs::path out = dir.path() / "out";
    std::ofstream(out).put('x');
    store::DirectWriter direct;
    direct.open(out);
    if (!direct.active()) {
        WARN("this file system refuses O_DIRECT");
        return;
    }
    std::vector<uint8_t> bytes((size_t(2) << 20) + 4096, 7);
    const uint8_t* misaligned = bytes.data() + ((4096 - uintptr_t(bytes.data()) % 4096) % 4096) + 1;
    CHECK(!direct.fits(misaligned, size_t(1) << 20, 0));
    bool failed = true;
    const size_t done = direct.write(misaligned, size_t(1) << 20, 0, failed);
    CHECK(!failed);
    if (done == 0) {
        CHECK(!direct.active()); // refused (EINVAL): buffered from now on
        CHECK(fs::file_size(out) == 1);
    } else {
        CHECK(done == (size_t(1) << 20)); // a file system that takes it whatever the alignment
    }
    ::setenv("HPCPROF_NO_DIRECT_IO", "1", 1);
    direct.open(out);
    ::unsetenv("HPCPROF_NO_DIRECT_IO");
    CHECK(!direct.active());
}

TEST_CASE("leaves appended one at a time step over the lock-byte page", "[store][shards]") {
    const PendingByte moved(512 * 40);
    TempDir dir;
    const fs::path out = dir.path() / "out.db";
    REQUIRE(schema::exec(openDb(out).get(), kTable).ok());
    auto tree = store::pages::TreeAppender::open(out, rootOf(out), 512 * 40);
    REQUIRE(tree.ok());
    store::pages::LeafPacker packer(tree->pageSize(), tree->usable(),
                                    [&](const uint8_t* page, int64_t last) { return tree->addLeaf(page, last); });
    int64_t sum = 0;
    for (int64_t id = 1; id <= 5'000; ++id) {
        const std::optional<int64_t> columns[] = {std::nullopt, id % 300, id * 1'000, id % 9, id, std::nullopt};
        uint8_t record[1 + 9 * 6 + 8];
        const int64_t n = store::pages::encodeIntegerRecord(columns, 6, record);
        REQUIRE(packer.add(id, record, n).ok());
        sum += id * 1'000;
    }
    REQUIRE(packer.flush().ok());
    REQUIRE(tree->finish().ok());
    CHECK(text(out, "PRAGMA integrity_check") == "ok");
    CHECK(text(out, "SELECT COUNT(*), SUM(ts) FROM ev") == "5000|" + std::to_string(sum));
}

TEST_CASE("a row the page copy does not handle is an error, and the file is left as it was", "[store][shards]") {
    TempDir dir;
    const fs::path a = dir.path() / "a.db", out = dir.path() / "out.db";
    makeShard(a, 100, 0);
    {
        auto db = openDb(out);
        REQUIRE(schema::exec(db.get(), kTable).ok());
    }
    const auto size = fs::file_size(out);
    auto appender = store::TableAppender::open(out, rootOf(out));
    REQUIRE(appender.ok());
    // note holds text in every third row: not an integer to add to.
    const std::vector<store::ColumnOp> ops = {{}, {}, {}, {}, {store::ColumnOp::Kind::Add, 1, nullptr}, {}};
    CHECK_FALSE(appender->append(a, rootOf(a), 1, 100, 0, ops).ok());
    appender->abandon();
    CHECK(fs::file_size(out) == size);
    CHECK(text(out, "PRAGMA integrity_check") == "ok");
    CHECK(text(out, "SELECT COUNT(*) FROM ev") == "0");
}

TEST_CASE("a damaged shard page is an error or rows, never a crash or a broken trace", "[store][shards]") {
    TempDir dir;
    const fs::path clean = dir.path() / "clean.db";
    makeShard(clean, 300, 0);
    const uint32_t root = rootOf(clean);
    const auto pages = uint32_t(fs::file_size(clean) / 512);
    const std::vector<store::ColumnOp> ops = {{}, {store::ColumnOp::Kind::Add, 1, nullptr}, {}, {}, {}, {}};
    // (offset in the page, bytes): the whole page, its cell count, its first cell pointer, its
    // right-most child (interior pages), the middle of its cells.
    const std::vector<std::pair<uint32_t, std::vector<uint8_t>>> damage = {
        {0, std::vector<uint8_t>(512, 0xFF)}, {3, {0xFF, 0xFF}}, {8, {0xFF, 0xF0}}, {8, {0x00, 0x01}},
        {8, {0x7F, 0xFF, 0xFF, 0xFF}}, {300, std::vector<uint8_t>(100, 0xFF)}};
    for (uint32_t pg = 2; pg <= pages; ++pg) {
        for (const auto& [at, bytes] : damage) {
            const fs::path shard = dir.path() / "shard.db", out = dir.path() / "out.db";
            fs::copy_file(clean, shard, fs::copy_options::overwrite_existing);
            {
                std::FILE* f = std::fopen(shard.c_str(), "r+b");
                REQUIRE(f);
                std::fseek(f, long(pg - 1) * 512 + at, SEEK_SET);
                std::fwrite(bytes.data(), 1, bytes.size(), f);
                std::fclose(f);
            }
            fs::remove(out);
            REQUIRE(schema::exec(openDb(out).get(), kTable).ok());
            auto appender = store::TableAppender::open(out, rootOf(out));
            REQUIRE(appender.ok());
            INFO("page " << pg << ", offset " << at);
            if (appender->append(shard, root, 1, 300, 0, ops).ok()) REQUIRE(appender->finish().ok());
            else appender->abandon();
            CHECK(text(out, "PRAGMA integrity_check") == "ok");
        }
    }
}

TEST_CASE("varints written and read inline are SQLite's, at every length", "[store][shards]") {
    namespace pages = hpcprof::store::pages;
    for (int bits = 0; bits <= 64; ++bits) {
        for (uint64_t delta : {uint64_t(0), uint64_t(1)}) {
            const uint64_t v = bits == 64 ? ~uint64_t(0) - delta : (uint64_t(1) << bits) - 1 + delta;
            uint8_t fast[9] = {}, slow[9] = {};
            const int n = pages::putVarint(fast, v), m = pages::putVarintSlow(slow, v);
            INFO(v);
            CHECK(n == m);
            CHECK(n == pages::varintLen(v));
            CHECK(std::equal(fast, fast + 9, slow));
            uint64_t back = 0, within = 0;
            CHECK(pages::getVarint(fast, &back) == n);
            CHECK(back == v);
            CHECK(pages::getVarintIn(fast, fast + n, &within) == n);
            CHECK(within == v);
            CHECK(pages::getVarintIn(fast, fast + n - 1, &within) == 0); // cut short: not a varint
            // With nine bytes to read (the inline decoding of up to four bytes).
            CHECK(pages::getVarintIn(fast, fast + 9, &within) == n);
            CHECK(within == v);
        }
    }
}

TEST_CASE("integers of every serial type read back as written", "[store][shard_pages]") {
    using namespace hpcprof::store::pages;
    std::vector<int64_t> values = {INT64_MIN, INT64_MAX, 0, 1, -1, 2};
    for (int bits : {7, 15, 23, 31, 47}) {
        const int64_t top = (int64_t(1) << bits) - 1;
        for (int64_t v : {top, top + 1, -top - 1, -top - 2, top - 5, -top + 3}) values.push_back(v);
    }
    std::set<uint64_t> types;
    for (int64_t v : values) {
        uint8_t buf[16] = {};
        const uint64_t t = integerType(v);
        types.insert(t);
        storeInteger(buf, t, v);
        INFO(v << " as type " << t);
        CHECK(readInteger(t, buf) == v);
        CHECK(serialLen(t) <= 8);
    }
    CHECK(types == std::set<uint64_t>{1, 2, 3, 4, 5, 6, 8, 9}); // every integer type was tried
    const uint8_t oneAndAHalf[8] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0}; // big-endian 1.5
    CHECK(readReal(oneAndAHalf) == 1.5);
}

TEST_CASE("a leaf packed into a page that held other bytes is the leaf packed into a fresh page", "[store][shard_pages]") {
    using namespace hpcprof::store::pages;
    constexpr uint32_t kPageSize = 1024, kUsable = 1000; // 24 reserved bytes at the end
    std::vector<std::vector<uint8_t>> own, inPlace;
    std::vector<uint8_t> dirty(kPageSize);
    auto keep = [](std::vector<std::vector<uint8_t>>& to) {
        return [&to](const uint8_t* page, int64_t) {
            to.emplace_back(page, page + kPageSize);
            return Status{};
        };
    };
    LeafPacker fresh(kPageSize, kUsable, keep(own));
    LeafPacker reused(kPageSize, kUsable, keep(inPlace), [&dirty] {
        std::fill(dirty.begin(), dirty.end(), uint8_t(0xab)); // what an earlier window left
        return dirty.data();
    });
    for (int64_t rowid = 1; rowid <= 200; ++rowid) {
        const std::vector<uint8_t> record(size_t(rowid % 37 + 2), uint8_t(rowid));
        REQUIRE(fresh.add(rowid * 3, record.data(), int64_t(record.size())).ok());
        REQUIRE(reused.add(rowid * 3, record.data(), int64_t(record.size())).ok());
    }
    REQUIRE(fresh.flush().ok());
    REQUIRE(reused.flush().ok());
    REQUIRE(own.size() > 3);
    CHECK(own == inPlace);
    CHECK(reused.rows() == 200);
}

TEST_CASE("pages read in one piece past the page cache are the pages read one by one", "[store][shard_pages]") {
    TempDir dir;
    const fs::path a = dir.path() / "a.db";
    makeShard(a, 20'000, 4, 4096);
    schema::pages::PageFile byPage, inOnePiece;
    REQUIRE(byPage.open(a, O_RDONLY).ok());
    REQUIRE(inOnePiece.open(a, O_RDONLY).ok());
    const uint32_t pages = byPage.pageCount;
    REQUIRE(pages > 20);
    CHECK(!inOnePiece.preload(pages - 2, 5)); // past the end: nothing kept
    CHECK(!inOnePiece.preload(0, 3));
    if (!inOnePiece.preload(3, pages - 5)) {
        WARN("this file system refuses O_DIRECT reads");
        return;
    }
    for (uint32_t pgno = 1; pgno <= pages; ++pgno) {
        const uint8_t* one = byPage.page(pgno, 0);
        const uint8_t* piece = inOnePiece.page(pgno, 1);
        REQUIRE(one);
        REQUIRE(piece);
        INFO("page " << pgno);
        CHECK(std::equal(one, one + byPage.pageSize, piece));
    }
    // A later span replaces the first.
    REQUIRE(inOnePiece.preload(pages - 4, 4));
    for (uint32_t pgno : {uint32_t(1), uint32_t(5), pages - 3, pages})
        CHECK(std::equal(byPage.page(pgno, 0), byPage.page(pgno, 0) + byPage.pageSize, inOnePiece.page(pgno, 1)));
}

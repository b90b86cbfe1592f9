// SPDX-License-Identifier: MIT
#include "hostile_corpus.hpp"

#include <sqlite3.h>

#include <catch2/catch.hpp>

#include <fstream>
#include <random>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/tables.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

namespace hpcprof::test::corpus {

namespace fs = std::filesystem;
using schema::Category;

namespace {

/// `text` as an SQL expression that keeps every byte (a hex blob cast to TEXT).
std::string sqlText(const std::string& text) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out = "CAST(X'";
    for (unsigned char c : text) {
        out += kHex[c >> 4];
        out += kHex[c & 15];
    }
    return out + "' AS TEXT)";
}

std::string readAll(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), {});
}

void writeAll(const fs::path& p, const std::string& data) {
    std::ofstream(p, std::ios::binary) << data;
}

} // namespace

// Each name carries most kinds of trouble, so that every place a name is shown meets them.
std::string hostileKernelName() {
    return "gemm\x1b[31m<red>\x1b[0m\x1b]0;pwned\x07|*_`[x]\xff\xfe\xc3\r"
           "\xed\xa0\x80\xc0\xaf\xef\xbf\xbe</failure>&amp;]]>";
}
std::string hostileFileName() {
    static const char kName[] = "/data/\xff\x1b[2Jcleared\r\x07\xc2\x9b"
                                "31m\nnul\0byte.bin";
    return std::string(kName, sizeof kName - 1); // with its NUL
}
std::string hostileRangeName() {
    return "step\x1b[1m\xc2\x85#\x7f\t\xe2\x82";
}
std::string hostileHost() {
    return "node\x1b]2;title\x07\xff\r";
}

void copyAndRun(const fs::path& from, const fs::path& to, const std::string& sql) {
    fs::copy_file(from, to, fs::copy_options::overwrite_existing);
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open(to.c_str(), &db) == SQLITE_OK);
    char* err = nullptr;
    int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
    INFO(sql << ": " << (err ? err : ""));
    sqlite3_free(err);
    sqlite3_close(db);
    REQUIRE(rc == SQLITE_OK);
}

void writeHostileTrace(const fs::path& path) {
    TraceBuilder b;
    const int r0 = b.rank(0, 0, 2'000'000, 2);
    const int r1 = b.rank(1, 0, 2'000'000, 2);
    const int g0 = b.gpuStream(r0, 0, 7);
    for (int step = 0; step < 3; ++step) {
        const int64_t t = step * 600'000;
        b.event(r0, Category::UserRange, hostileRangeName(), t, 550'000);
        b.event(r1, Category::UserRange, hostileRangeName(), t, 550'000);
        b.event(r0, Category::PosixIo, "read", t + 10'000, 40'000)
            .withObject(hostileFileName())
            .withBytes(4096);
        b.event(g0, Category::GpuKernel, hostileKernelName(), t + 20'000, 300'000);
        b.event(r0, Category::MpiCollective, "MPI_Allreduce", t + 400'000, 100'000)
            .collective("world", 2, step);
        b.event(r1, Category::MpiCollective, "MPI_Allreduce", t + 300'000, 200'000)
            .collective("world", 2, step);
    }
    const fs::path built = path.string() + ".built";
    b.write(built.string());
    // The builder names hosts and commands itself: the hostile ones are put in afterwards.
    copyAndRun(built, path,
               "UPDATE process SET host = " + sqlText(hostileHost()) +
                   ", command = " + sqlText(hostileFileName()) + ";");
    fs::remove(built);
}

void flipBits(const fs::path& path, uint32_t seed, int bits, size_t pageSize) {
    std::string data = readAll(path);
    REQUIRE(data.size() >= pageSize);
    std::mt19937 rng(seed);
    const size_t pages = data.size() / pageSize;
    for (int i = 0; i < bits; ++i) {
        const size_t page = rng() % pages;
        const size_t within = rng() % 2 ? rng() % 64 : pageSize - 1 - rng() % 512;
        data[page * pageSize + within] ^= char(1u << (rng() % 8));
    }
    writeAll(path, data);
}

/// SQL that turns a trace into one written before event_unfinished: the table dropped and
/// event_view as it was (the DDL's view without its `unfinished` column and join).
std::string viewWithoutUnfinished() {
    const std::string ddl(hpcprof::schema::ddl());
    const size_t b = ddl.find("CREATE VIEW event_view");
    std::string view = ddl.substr(b, ddl.find(";", b) - b);
    auto cut = [&](const std::string& from, const std::string& to) {
        const size_t i = view.find(from);
        REQUIRE(i != std::string::npos);
        view.erase(i, to.empty() ? std::string::npos : view.find(to, i) - i);
    };
    cut("\n    (eu.event_id IS NOT NULL) AS unfinished", "\nFROM event e");
    cut("\nLEFT JOIN event_unfinished", "");
    view.replace(view.find("e.track_id AS track_id,"), 23, "e.track_id AS track_id ");
    return "DROP VIEW event_view; DROP TABLE event_unfinished; " + view + ";";
}

std::vector<TraceCase> damagedTraces(const fs::path& good, const fs::path& dir) {
    std::vector<TraceCase> out;
    auto add = [&](const std::string& name, Outcome o,
                   const std::string& refusal) -> const fs::path& {
        out.push_back({name, dir / (name + ".hpcprof"), o, refusal});
        return out.back().path;
    };
    // The schema of the file: every table and view of the DDL, with every column, is required.
    for (const char* table :
         {"event", "track", "process", "string", "category", "stats", "metadata", "counter_track"})
        copyAndRun(good,
                   add(std::string("missing-table-") + table, Outcome::Refused, "damaged trace"),
                   std::string("DROP TABLE ") + table);
    copyAndRun(good, add("missing-view", Outcome::Refused, "damaged trace"),
               "DROP VIEW stats_view");
    for (const auto& [table, column] :
         std::vector<std::pair<std::string, std::string>>{{"event", "ts"},
                                                          {"event", "track_id"},
                                                          {"track", "first_event_id"},
                                                          {"process", "rank"},
                                                          {"string", "value"},
                                                          {"category", "class"},
                                                          {"stats", "severity"}})
        copyAndRun(good,
                   add("renamed-" + table + "." + column, Outcome::Refused,
                       "has no column '" + column + "'"),
                   "ALTER TABLE " + table + " RENAME COLUMN " + column + " TO renamed_" + column);
    copyAndRun(good, add("version-999", Outcome::Refused, "version 999"),
               "PRAGMA user_version = 999");
    copyAndRun(good, add("version-0", Outcome::Refused, "version 0"), "PRAGMA user_version = 0");
    // A trace an older hpcprof wrote: the message says what to do (convert the raw data again).
    copyAndRun(good, add("version-older", Outcome::Refused, "written by an older hpcprof"),
               "PRAGMA user_version = " + std::to_string(hpcprof::schema::kOldestReadableSchemaVersion - 1));
    copyAndRun(good, add("foreign-application-id", Outcome::Refused, "not an hpcprof trace"),
               "PRAGMA application_id = 0");
    // A trace written before event_unfinished (issue 23) opens: its event_view has no
    // `unfinished` column and it has no such table (schema::kAddedLater). Its name ends like
    // the hostile path below, as every valid case's does (trace_readers_test checks the report
    // names it escaped).
    copyAndRun(good, add("before-event-unfinished-path\xff\x1b[31m\r\x07\xc2\x9b", Outcome::Valid, ""),
               viewWithoutUnfinished());

    // Bytes: cut, zeroed, flipped; files that are not traces at all.
    const std::string data = readAll(good);
    const size_t pageSize = size_t(uint8_t(data[16])) << 8 | uint8_t(data[17]);
    const size_t page = pageSize == 1 ? 65536 : pageSize;
    writeAll(add("truncated-half", Outcome::Refused, "truncated"), data.substr(0, data.size() / 2));
    writeAll(add("truncated-one-page-and-7", Outcome::Refused, ""), data.substr(0, page + 7));
    writeAll(add("truncated-in-header", Outcome::Refused, ""), data.substr(0, 60));
    {
        std::string zeroed = data;
        std::fill(zeroed.begin() + long(2 * page),
                  zeroed.begin() + long(std::min(zeroed.size(), 4 * page)), '\0');
        writeAll(add("zeroed-pages", Outcome::Either, ""), zeroed);
    }
    for (uint32_t seed = 1; seed <= 6; ++seed) {
        const fs::path& p = add("flipped-" + std::to_string(seed), Outcome::Either, "");
        writeAll(p, data);
        flipBits(p, seed, 24, page);
    }
    writeAll(add("empty", Outcome::Refused, "empty"), "");
    {
        std::mt19937 rng(42);
        std::string noise(10000, '\0');
        for (auto& c : noise)
            c = char(rng());
        writeAll(add("noise", Outcome::Refused, ""), noise);
    }
    writeAll(add("text", Outcome::Refused, "not an hpcprof trace"), std::string(5000, 'x'));
    fs::create_directory(add("a-directory", Outcome::Refused, "not a regular file"));
    add("does-not-exist", Outcome::Refused, "no such file");

    // A valid trace at a path with every kind of trouble in its name.
    fs::copy_file(good, add("path\xff\x1b[31m\r\x07\xc2\x9b", Outcome::Valid, ""));
    return out;
}

} // namespace hpcprof::test::corpus

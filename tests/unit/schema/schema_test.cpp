// SPDX-License-Identifier: MIT
// The DDL and the C++ constants describe the same schema; catalogs have unique ids and names.
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/event_categories.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/tables.hpp"

using namespace hpcprof::schema;

namespace {
DbHandle memoryDbWithDdl() {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(":memory:", &raw) == SQLITE_OK);
    DbHandle db(raw);
    auto s = exec(db.get(), ddl());
    INFO(s.message());
    REQUIRE(s.ok());
    return db;
}

std::set<std::string> columnsOf(sqlite3* db, std::string_view table) {
    auto names = columnNames(db, "main", table);
    REQUIRE(names.ok());
    return {names.value().begin(), names.value().end()};
}
} // namespace

TEST_CASE("columnNames lists a table's columns in order, in the schema it is asked for", "[schema]") {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open(":memory:", &raw) == SQLITE_OK);
    DbHandle db(raw);
    REQUIRE(exec(db.get(), "CREATE TABLE t (b INTEGER, a TEXT, \"odd name\" REAL);"
                           "ATTACH ':memory:' AS other; CREATE TABLE other.t (z INTEGER)").ok());
    auto main = columnNames(db.get(), "main", "t");
    REQUIRE(main.ok());
    CHECK(main.value() == std::vector<std::string>{"b", "a", "odd name"});
    auto other = columnNames(db.get(), "other", "t");
    REQUIRE(other.ok());
    CHECK(other.value() == std::vector<std::string>{"z"});
    auto missing = columnNames(db.get(), "main", "no_such_table");
    REQUIRE(missing.ok());
    CHECK(missing.value().empty());
}

TEST_CASE("the DDL applies to an empty database and sets version and application id", "[schema]") {
    auto db = memoryDbWithDdl();
    Statement v(db.get(), "PRAGMA user_version");
    REQUIRE(v.step());
    CHECK(v.int64(0) == kSchemaVersion);
    Statement a(db.get(), "PRAGMA application_id");
    REQUIRE(a.step());
    CHECK(a.int64(0) == kApplicationId);
}

TEST_CASE("every table and view named in tables.hpp exists in the DDL", "[schema]") {
    auto db = memoryDbWithDdl();
    for (auto t : {table::kMetadata, table::kString, table::kCategory, table::kProcess,
                   table::kThread, table::kTrack, table::kObject, table::kCommunicator,
                   table::kEvent, table::kEventDetail, table::kEventArg, table::kMpiCompletion, table::kCounterTrack, table::kCounter,
                   table::kStats, table::kStatsByProcess, view::kEventView, view::kCounterView,
                   view::kStatsView}) {
        INFO(t);
        CHECK_FALSE(columnsOf(db.get(), t).empty());
    }
}

TEST_CASE("column lists in tables.hpp match the DDL exactly", "[schema]") {
    auto db = memoryDbWithDdl();
    auto check = [&](std::string_view table, auto const& expected) {
        std::set<std::string> want(std::begin(expected), std::end(expected));
        INFO(table);
        CHECK(columnsOf(db.get(), table) == want);
    };
    check(table::kEvent, kEventColumns);
    check(table::kProcess, kProcessColumns);
    check(table::kTrack, kTrackColumns);
    check(table::kThread, kThreadColumns);
    check(table::kStats, kStatsColumns);
    check(table::kMpiCompletion, kMpiCompletionColumns);
    check(view::kEventView, kEventViewColumns);
    check(view::kCounterView, kCounterViewColumns);
}

TEST_CASE("event_view offers the documented stable columns", "[schema]") {
    auto db = memoryDbWithDdl();
    auto cols = columnsOf(db.get(), view::kEventView);
    for (const char* c : {"rank", "pid", "tid", "track", "category", "class", "name", "ts_ns",
                          "dur_ns", "bytes", "peer", "object"})
        CHECK(cols.count(c) == 1);
}

TEST_CASE("catalog ids and names are unique and classes are the documented ones", "[schema]") {
    std::set<int> catIds, opIds;
    std::set<std::string_view> catNames, opNames, statNames;
    const std::set<std::string_view> classes = {"compute", "communication", "io",
                                                "memory",  "sync",          "setup",
                                                "annotation"};
    for (const auto& c : kCategories) {
        CHECK(catIds.insert(int(c.category)).second);
        CHECK(catNames.insert(c.name).second);
        CHECK(classes.count(c.className) == 1);
    }
    for (const auto& o : kOps) {
        CHECK(opIds.insert(int(o.op)).second);
        CHECK(opNames.insert(o.name).second);
        CHECK(findOp(uint16_t(o.op)) == &o);
    }
    for (const auto& s : kStats) CHECK(statNames.insert(s.name).second);
    CHECK(findOp(0) == nullptr);
    CHECK(findOp(1999) == nullptr);  // inside the id index, unused
    CHECK(findOp(65535) == nullptr); // beyond it
    CHECK(categoryInfo(Category::PosixIo).className == "io");
}

TEST_CASE("a created trace holds the category catalog", "[schema]") {
    std::string path = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                       "/hpcprof-schema-test-" + std::to_string(getpid()) + ".hpcprof";
    std::remove(path.c_str());
    {
        auto db = createTrace(path);
        REQUIRE(db.ok());
        Statement n(db->get(), "SELECT COUNT(*) FROM category");
        REQUIRE(n.step());
        CHECK(n.int64(0) == int64_t(std::size(kCategories)));
    }
    auto ro = openTraceReadOnly(path);
    CHECK(ro.ok());
    std::remove(path.c_str());
}

TEST_CASE("opening refuses files that are not traces with a clear message", "[schema]") {
    std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    std::string empty = dir + "/hpcprof-empty-" + std::to_string(getpid());
    std::string text = dir + "/hpcprof-text-" + std::to_string(getpid());
    std::string other = dir + "/hpcprof-other-" + std::to_string(getpid()) + ".db";
    FILE* f = std::fopen(empty.c_str(), "w");
    std::fclose(f);
    f = std::fopen(text.c_str(), "w");
    std::fputs("this is not a database\n", f);
    std::fclose(f);
    std::remove(other.c_str());
    {
        sqlite3* raw = nullptr;
        sqlite3_open(other.c_str(), &raw);
        DbHandle db(raw);
        exec(db.get(), "CREATE TABLE t(x); INSERT INTO t VALUES (1);");
    }
    auto a = openTraceReadOnly(empty);
    REQUIRE_FALSE(a.ok());
    CHECK_THAT(a.status().message(), Catch::Contains("empty"));
    auto b = openTraceReadOnly(text);
    REQUIRE_FALSE(b.ok());
    CHECK_THAT(b.status().message(), Catch::Contains("not an hpcprof trace"));
    auto c = openTraceReadOnly(other);
    REQUIRE_FALSE(c.ok());
    CHECK_THAT(c.status().message(), Catch::Contains("application_id"));
    auto d = openTraceReadOnly(dir + "/does-not-exist.hpcprof");
    REQUIRE_FALSE(d.ok());
    CHECK_THAT(d.status().message(), Catch::Contains("no such file"));
    std::remove(empty.c_str());
    std::remove(text.c_str());
    std::remove(other.c_str());
}

TEST_CASE("opening refuses another schema version and truncated files", "[schema]") {
    std::string dir = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp";
    std::string path = dir + "/hpcprof-v99-" + std::to_string(getpid()) + ".hpcprof";
    std::remove(path.c_str());
    {
        auto db = createTrace(path);
        REQUIRE(db.ok());
        exec(db->get(), "PRAGMA user_version = 99");
    }
    auto r = openTraceReadOnly(path);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("schema version 99"));
    {
        auto db = createTrace(path + "2");
        REQUIRE(db.ok());
        exec(db->get(), "CREATE TABLE filler(x); WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL "
                        "SELECT i+1 FROM c WHERE i < 20000) INSERT INTO filler SELECT i FROM c;");
    }
    REQUIRE(truncate((path + "2").c_str(), 16384) == 0);
    auto t = openTraceReadOnly(path + "2");
    REQUIRE_FALSE(t.ok());
    CHECK_THAT(t.status().message(), Catch::Contains("truncated"));
    std::remove(path.c_str());
    std::remove((path + "2").c_str());
}

TEST_CASE("event_categories: names in id order, numbers for ids this build does not know, nothing else read",
          "[schema]") {
    using hpcprof::schema::CategorySet;
    using hpcprof::schema::eventCategoriesText;
    using hpcprof::schema::parseEventCategories;
    CategorySet set;
    CHECK(eventCategoriesText(set).empty());
    set.set(size_t(hpcprof::schema::Category::UserRange)).set(size_t(hpcprof::schema::Category::PosixIo)).set(250);
    CHECK(eventCategoriesText(set) == "posix_io,user_range,250");
    auto back = parseEventCategories(eventCategoriesText(set));
    REQUIRE(back);
    CHECK(*back == set);
    auto none = parseEventCategories("");
    REQUIRE(none);
    CHECK(none->none());
    for (const char* bad : {"posix_io,", ",posix_io", "posix_io,,nvtx", "posix_io,no_such", "256", "-1", "1x", " nvtx"}) {
        INFO(bad);
        CHECK_FALSE(parseEventCategories(bad));
    }
}

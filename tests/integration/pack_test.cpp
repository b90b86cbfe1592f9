// SPDX-License-Identifier: MIT
// `hpcprof pack`: a real program's trace, packed, gives byte-identical reports (every format,
// with a gate, a window), diffs (every format, either side packed) and exports (whole,
// windowed, compressed); damaged packed files are refused with a clear message and exit code 2.
// A trace of the previous schema version (2: offsets in event_detail) reads the same as the
// current one. (The GUI models on both forms: pack_gui_test.cpp.)
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "hpcprof/schema/sqlite.hpp"
#include "pack_twins.hpp"
#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

ProcessResult cli(std::vector<std::string> args) {
    args.insert(args.begin(), hpcprofBinary());
    return runProcess(args);
}

std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

void writeFile(const std::string& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary) << bytes;
}

/// `text` with every `from` replaced by `to` (reports name the trace they read).
std::string replaced(std::string text, const std::string& from, const std::string& to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

/// Rewrites the schema 3 trace at `path` as schema 2 wrote it: positioned calls' offsets in
/// event_detail (a row for each such event), no event.offset, user_version 2.
void downgradeToSchema2(const std::string& path) {
    sqlite3* raw = nullptr;
    REQUIRE(sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK);
    hpcprof::schema::DbHandle db(raw);
    auto st = hpcprof::schema::exec(
        db.get(), "ALTER TABLE event_detail ADD COLUMN offset INTEGER;"
                  "INSERT INTO event_detail(event_id, offset) SELECT id, offset FROM event"
                  " WHERE offset IS NOT NULL ON CONFLICT(event_id) DO UPDATE SET offset = excluded.offset;"
                  // (DROP COLUMN trips on the DDL's trailing comment: the table is rebuilt.)
                  "PRAGMA legacy_alter_table = ON; ALTER TABLE event RENAME TO event_v3;"
                  "CREATE TABLE event (id INTEGER PRIMARY KEY, track_id INTEGER NOT NULL, ts INTEGER NOT NULL,"
                  " dur INTEGER NOT NULL, category_id INTEGER NOT NULL, name_id INTEGER NOT NULL,"
                  " depth INTEGER NOT NULL, bytes INTEGER, object_id INTEGER, peer INTEGER,"
                  " communicator_id INTEGER, seq INTEGER, correlation_id INTEGER, count INTEGER);"
                  "INSERT INTO event SELECT id, track_id, ts, dur, category_id, name_id, depth, bytes,"
                  " object_id, peer, communicator_id, seq, correlation_id, count FROM event_v3 ORDER BY id;"
                  "DROP TABLE event_v3; PRAGMA user_version = 2; VACUUM;");
    INFO(st.message());
    REQUIRE(st.ok());
}

/// Every table of `b` holds the rows of `a`'s, and the schema versions agree.
void checkSameRows(const std::string& a, const std::string& b) {
    TraceQuery qa(a), qb(b);
    auto tables = qa.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
    CHECK(qb.rows("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name") == tables);
    for (const std::string& t : tables) {
        INFO(t);
        const std::string sql = "SELECT * FROM main.\"" + t + "\" ORDER BY 1";
        CHECK(qb.rows(sql) == qa.rows(sql));
    }
    CHECK(qb.scalar("PRAGMA main.user_version") == qa.scalar("PRAGMA main.user_version"));
    CHECK(qa.scalar("SELECT COUNT(*) FROM event WHERE offset IS NOT NULL") >= 2);
}

} // namespace

TEST_CASE("a schema 2 trace gives the same reports, diffs and exports as schema 3", "[integration][pack]") {
    TempDir dir;
    const std::string v3 = dir / "t.hpcprof", v2 = dir / "old.hpcprof";
    REQUIRE(cli({"run", "-q", "-o", v3, "--", sampleBinary("io_sample"), dir.path().string()}).exitCode == 0);
    fs::copy_file(v3, v2);
    downgradeToSchema2(v2);
    {
        TraceQuery q(v2); // opens: version 2 is still read, and its event view has the offset
        CHECK(q.scalar("PRAGMA main.user_version") == 2);
        CHECK(q.scalar("SELECT COUNT(*) FROM main.event_detail WHERE offset IS NOT NULL") >= 2);
        CHECK(TraceQuery(v3).rows("SELECT id, offset FROM event WHERE offset IS NOT NULL ORDER BY id") ==
              q.rows("SELECT id, offset FROM event WHERE offset IS NOT NULL ORDER BY id"));
    }
    for (const char* format : {"text", "json"}) {
        auto a = cli({"report", v3, "--format", format});
        auto b = cli({"report", v2, "--format", format});
        INFO(format << ": " << b.err);
        REQUIRE(a.exitCode == 0);
        REQUIRE(b.exitCode == 0);
        CHECK(replaced(b.out, v2, v3) == a.out);
    }
    auto d1 = cli({"diff", v3, v3, "--format", "json"});
    auto d2 = cli({"diff", v2, v3, "--format", "json"});
    REQUIRE(d2.exitCode == 0);
    CHECK(replaced(d2.out, v2, v3) == d1.out);
    REQUIRE(cli({"export", v3, "-o", dir / "v3.json"}).exitCode == 0);
    REQUIRE(cli({"export", v2, "-o", dir / "v2.json"}).exitCode == 0);
    const std::string exported = readFile(dir / "v3.json");
    CHECK_THAT(exported, Catch::Contains("\"offset\": 20000")); // io_sample's pwrite at 20000
    CHECK(replaced(readFile(dir / "v2.json"), v2, v3) == exported);
}

TEST_CASE("a packed trace gives the same reports, diffs and exports as the plain one", "[integration][pack]") {
    const bool whole = GENERATE(false, true); // column-wise (the default) and whole-file
    INFO((whole ? "whole-file form" : "column-wise form"));
    TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "p.hpcprof";
    auto run = cli({"run", "-q", "-o", plain, "--", sampleBinary("io_sample"), dir.path().string()});
    REQUIRE(run.exitCode == 0);
    std::vector<std::string> args = {"pack", plain, "-o", packed};
    if (whole) args.push_back("--whole");
    auto pack = cli(args);
    INFO(pack.err);
    REQUIRE(pack.exitCode == 0);
    CHECK(fs::file_size(packed) < fs::file_size(plain) / 4);
    CHECK_THAT(pack.err, Catch::Contains("B/event"));
    CHECK_THAT(pack.err, Catch::Contains(whole ? "whole file" : "column-wise"));

    for (const char* format : {"text", "json", "md"}) {
        auto a = cli({"report", plain, "--format", format});
        auto b = cli({"report", packed, "--format", format});
        INFO(format << ": " << b.err);
        REQUIRE(a.exitCode == 0);
        REQUIRE(b.exitCode == 0);
        CHECK(replaced(b.out, packed, plain) == a.out);
    }
    auto d1 = cli({"diff", plain, plain, "--format", "json"});
    auto d2 = cli({"diff", packed, plain, "--format", "json"});
    REQUIRE(d1.exitCode == 0);
    REQUIRE(d2.exitCode == 0);
    CHECK(replaced(d2.out, packed, plain) == d1.out);
    auto e1 = cli({"export", plain, "-o", dir / "plain.json"});
    auto e2 = cli({"export", packed, "-o", dir / "packed.json"});
    INFO(e2.err);
    REQUIRE(e1.exitCode == 0);
    REQUIRE(e2.exitCode == 0);
    CHECK(replaced(readFile(dir / "packed.json"), packed, plain) == readFile(dir / "plain.json"));

    // Unpacked, the trace holds the same rows in every table.
    auto unpack = cli({"pack", "--unpack", packed, "-o", dir / "unpacked.hpcprof"});
    INFO(unpack.err);
    REQUIRE(unpack.exitCode == 0);
    checkSameRows(plain, dir / "unpacked.hpcprof");
    // The whole-file form is a standard zstd file: `zstd -d` gives the plain trace back, bit for bit.
    if (whole && runProcess({"sh", "-c", "command -v zstd"}).exitCode == 0) {
        auto unz = runProcess({"zstd", "-q", "-d", packed, "-o", dir / "back.hpcprof"});
        REQUIRE(unz.exitCode == 0);
        CHECK(readFile(dir / "back.hpcprof") == readFile(plain));
    }
    auto again = cli({"pack", packed, "-o", dir / "twice.zst"});
    CHECK(again.exitCode == 2);
    CHECK_THAT(again.err, Catch::Contains("already packed"));
}

TEST_CASE("a truncated or damaged packed trace is refused with exit code 2", "[integration][pack]") {
    const bool whole = GENERATE(false, true);
    INFO((whole ? "whole-file form" : "column-wise form"));
    TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "p.hpcprof";
    REQUIRE(cli({"run", "-q", "-o", plain, "--", sampleBinary("io_sample"), dir.path().string()})
                .exitCode == 0);
    std::vector<std::string> args = {"pack", plain, "-o", packed};
    if (whole) args.push_back("--whole");
    REQUIRE(cli(args).exitCode == 0);
    const std::string bytes = readFile(packed);
    REQUIRE(bytes.size() > 64);

    writeFile(dir / "cut.hpcprof", bytes.substr(0, bytes.size() / 2));
    auto cut = cli({"report", dir / "cut.hpcprof"});
    CHECK(cut.exitCode == 2);
    CHECK_THAT(cut.err, Catch::Contains("damaged packed trace"));

    std::string flipped = bytes;
    for (size_t i = bytes.size() / 3; i < bytes.size() / 3 + 16; ++i) flipped[i] = char(~flipped[i]);
    writeFile(dir / "flip.hpcprof", flipped);
    auto flip = cli({"report", dir / "flip.hpcprof"});
    CHECK(flip.exitCode == 2);
    CHECK_THAT(flip.err, Catch::Contains("damaged packed trace"));

    std::string tail = bytes; // the last frame: a column's values, or the whole form's checksum
    for (size_t i = bytes.size() - 12; i < bytes.size() - 4; ++i) tail[i] = char(~tail[i]);
    writeFile(dir / "tail.hpcprof", tail);
    auto end = cli({"export", dir / "tail.hpcprof", "-o", dir / "tail.json"});
    CHECK(end.exitCode == 2);
    CHECK_THAT(end.err, Catch::Contains("damaged packed trace"));

    writeFile(dir / "magic.hpcprof", bytes.substr(0, 4)); // the magic alone
    auto magic = cli({"diff", dir / "magic.hpcprof", plain});
    CHECK(magic.exitCode == 2);
    CHECK_THAT(magic.err, Catch::Contains("damaged packed trace"));
}

TEST_CASE("packing needs room for the trace without its events, not for a second copy",
          "[integration][pack]") {
    TempDir dir;
    const std::string plain = dir / "t.hpcprof", packed = dir / "p.hpcprof";
    auto run = cli({"run", "-q", "-o", plain, "--", sampleBinary("bulk_sample"), dir.path().string(), "100000", "1"});
    INFO(run.err);
    REQUIRE(run.exitCode == 0);
    // No file pack writes (its output, its temporary files in TMPDIR) may grow past half the
    // trace: the event rows, most of it, go straight from the trace into compressed columns.
    const uintmax_t limitKiB = fs::file_size(plain) / 2 / 1024;
    auto pack = runProcess({"bash", "-c", "ulimit -f " + std::to_string(limitKiB) + " && exec \"$0\" pack \"$1\" -o \"$2\"",
                            hpcprofBinary(), plain, packed},
                           {"TMPDIR=" + dir.path().string()});
    INFO(pack.err);
    REQUIRE(pack.exitCode == 0);
    auto unpack = cli({"pack", "--unpack", packed, "-o", dir / "unpacked.hpcprof"});
    INFO(unpack.err);
    REQUIRE(unpack.exitCode == 0);
    TraceQuery qa(plain), qb(dir / "unpacked.hpcprof");
    CHECK(qa.scalar("SELECT COUNT(*) FROM event") >= 100000);
    for (const char* sql : {"SELECT COUNT(*) FROM event", "SELECT SUM(bytes) FROM event", "SELECT SUM(ts) FROM event",
                            "SELECT COUNT(*) FROM string", "SELECT COUNT(*) FROM sqlite_stat1"})
        CHECK(qb.scalar(sql) == qa.scalar(sql));
}

namespace {

/// What `hpcprof ARGS` gives: exit code, stdout and the file `-o` names (if any), with every
/// path of `paths` written as {0}, {1}, ... (reports and diffs name the traces they read).
struct Outcome {
    int exitCode = -1;
    std::string out, file;
    bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
    return os << "exit " << o.exitCode << "\n" << o.out << "\n--- file ---\n" << o.file;
}

Outcome outcomeOf(const std::vector<std::string>& args, const std::vector<std::string>& paths,
                  const std::string& outFile = {}) {
    std::vector<std::string> argv = args;
    if (!outFile.empty()) {
        fs::remove(outFile);
        argv.insert(argv.end(), {"-o", outFile});
    }
    auto r = cli(argv);
    Outcome o{r.exitCode, r.out, outFile.empty() ? std::string() : readFile(outFile)};
    if (outFile.size() > 3 && outFile.ends_with(".gz"))
        o.file = runProcess({"gzip", "-dc", outFile}).out; // the gzip header holds no trace path
    for (size_t i = 0; i < paths.size(); ++i) {
        o.out = replaced(o.out, paths[i], "{" + std::to_string(i) + "}");
        o.file = replaced(o.file, paths[i], "{" + std::to_string(i) + "}");
    }
    return o;
}

} // namespace

TEST_CASE("every report format, diff and export gives the same on a packed real MPI run as on "
          "the plain one", "[integration][pack][mpi]") {
    TempDir dir;
    // Two runs of one program (the diff compares them), each plain and in both packed forms,
    // under the same file name in three folders (a report showing only the name sees no change).
    const PackTwins a = makePackTwins(dir, "a"), b = makePackTwins(dir, "b");
    const std::string out = dir / "out";
    // A window over the middle of run a (trace time: its second fifth to its fourth).
    TraceQuery qa(a.plain);
    const int64_t t0 = qa.scalar("SELECT MIN(ts) FROM event"), t1 = qa.scalar("SELECT MAX(ts + dur) FROM event");
    const std::string window = std::to_string(t0 + (t1 - t0) / 5) + ":" + std::to_string(t0 + (t1 - t0) * 4 / 5);
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"text", {"report", "{A}"}},
             {"json", {"report", "{A}", "--format", "json"}},
             {"md", {"report", "{A}", "--format", "md"}},
             {"html", {"report", "{A}", "--format", "html"}},
             {"junit gated", {"report", "{A}", "--format", "junit", "--junit-severity", "info",
                              "--fail-on", "comm.exposed_pct >= 0"}},
             {"window", {"report", "{A}", "--format", "json", "--window", window}},
             {"diff text", {"diff", "{A}", "{B}"}},
             {"diff md", {"diff", "{A}", "{B}", "--format", "md"}},
             {"diff html", {"diff", "{A}", "{B}", "--format", "html"}},
             {"diff json", {"diff", "{A}", "{B}", "--format", "json", "--min-change-pct", "0"}},
             {"diff junit gated", {"diff", "{A}", "{B}", "--format", "junit", "--min-change-pct", "0",
                                   "--fail-on", "regressions >= 0"}},
             {"export", {"export", "{A}"}},
             {"export window", {"export", "{A}", "--window", window}},
             {"export gz", {"export", "{A}"}}}) {
        const bool exported = args[0] == "export", withOutput = exported || name == "html";
        const std::string file = !withOutput ? std::string() : out + (name == "export gz" ? ".json.gz" : exported ? ".json" : ".html");
        auto run = [&](const std::string& ta, const std::string& tb) {
            std::vector<std::string> argv;
            for (const auto& arg : args) argv.push_back(arg == "{A}" ? ta : arg == "{B}" ? tb : arg);
            return outcomeOf(argv, {ta, tb}, file);
        };
        const Outcome plain = run(a.plain, b.plain);
        INFO(name << ": plain " << plain);
        CHECK(plain.exitCode == (name.ends_with("gated") ? 3 : 0)); // the gates always hold
        CHECK(plain.out.size() + plain.file.size() > 200);
        for (const auto& [ta, tb] : std::vector<std::pair<std::string, std::string>>{
                 {a.columns, b.columns}, {a.whole, b.whole}, {a.columns, b.plain}, {a.plain, b.whole}}) {
            INFO(ta << " and " << tb);
            CHECK(run(ta, tb) == plain);
        }
    }
}

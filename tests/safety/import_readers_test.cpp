// SPDX-License-Identifier: MIT
// `hpcprof import` against JSON that is not a trace (a number, a string, an object whose
// traceEvents is not an array, a PyTorch execution trace, ...) and traces with times, ranks and
// base times no trace can hold. What is not a trace is refused by name (exit 2, one line, no
// trace written); out-of-range values are refused, counted, never wrapped.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

#include "reader_checks.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

struct ImportFixture {
    TempDir dir;
    ReaderRunner runner{dir.path()};
    int next = 0;

    fs::path file(const std::string& name, const std::string& text) {
        fs::path p = dir.path() / name;
        std::ofstream(p, std::ios::binary) << text;
        return p;
    }
    /// Imports `inputs`; on success also reports the trace. Returns the trace path.
    std::string import(const std::vector<std::string>& inputs, const std::vector<int>& codes,
                       const std::string& refusal = {}, bool keepPartial = false) {
        const std::string out = (dir.path() / ("t" + std::to_string(next++) + ".hpcprof")).string();
        std::vector<std::string> argv = {hpcprofBinary(), "import"};
        argv.insert(argv.end(), inputs.begin(), inputs.end());
        argv.insert(argv.end(), {"-o", out, "-q"});
        if (keepPartial)
            argv.push_back("--keep-partial");
        auto r = runner.run(argv, codes, Output::None, out, refusal);
        if (r.exitCode == 0) {
            runner.run({hpcprofBinary(), "report", out, "--format", "json"}, {0}, Output::Json);
            runner.run({hpcprofBinary(), "report", out}, {0}, Output::Text);
        }
        return out;
    }
};

std::string event(const std::string& fields) {
    return "{\"ph\": \"X\", \"name\": \"k\", \"cat\": \"kernel\", \"pid\": 1, \"tid\": 7, " +
           fields + "}";
}

int64_t stat(const std::string& trace, const std::string& name) {
    return TraceQuery(trace).scalar("SELECT value FROM stats WHERE name = '" + name + "'");
}

} // namespace

TEST_CASE("import refuses JSON that is not a trace and says what it is", "[robustness][import]") {
    ImportFixture f;
    struct Case {
        std::string text, why;
        bool keptPartially = false; ///< --keep-partial imports it (a trace cut short)
    };
    const Case cases[] = {
        {"42", "a JSON number"},
        {"\"a string\"", "a JSON string"},
        {"null", "a JSON null"},
        {"true", "a JSON boolean"},
        {"{}", "an empty JSON object"},
        {"{\"traceEvents\": {}}", "traceEvents is an object"},
        {"{\"traceEvents\": 5}", "traceEvents is a number"},
        {"{\"displayTimeUnit\": \"ns\", \"otherData\": {}}",
         "without traceEvents (its keys: displayTimeUnit, otherData)"},
        {"[1, 2, 3]", "an array of 3 JSON values, none of them an event object"},
        // Objects that are not trace events: another tool's records (no "ph" phase).
        {"[{\"foo\": 1}, {\"bar\": 2}]",
         "none of the 2 objects of its event list is a trace event"},
        {"{\"traceEvents\": [{\"name\": \"x\", \"ts\": 1}]}",
         "none of the 1 objects of its event list is a trace event"},
        // torch.profiler.ExecutionTraceObserver output: an operator graph, no timed events.
        {"{\"schema\": \"1.0.1\", \"pid\": 1234, \"time\": \"2024-01-01 00:00:00\", \"start_ts\": "
         "1,"
         " \"nodes\": [{\"name\": \"[pytorch|profiler|execution_trace|thread]\", \"id\": 1, "
         "\"ctrl_deps\": 0}],"
         " \"finish_ts\": 2}",
         "a PyTorch execution trace"},
        {"", "not a trace"},
        {"\x89PNG\r\n\x1a\n binary", "not a trace"},
        {"{\"traceEvents\": [", "parse error", true},        // cut before any event
        {"[{\"ph\": \"X\", \"name\": \"\xff\"}]", "", true}, // not UTF-8
    };
    int i = 0;
    for (const auto& [text, why, keptPartially] : cases) {
        INFO(text);
        fs::path p = f.file("in" + std::to_string(i++) + ".json", text);
        f.import({p.string()}, {2}, why);
        auto kept = f.import({p.string()}, {keptPartially ? 0 : 2}, why, /*keepPartial=*/true);
        if (keptPartially)
            CHECK(stat(kept, "import_files_truncated") == 1);
    }
    // Empty arrays are traces without events, not errors.
    f.import({f.file("empty-events.json", "{\"traceEvents\": []}").string()}, {0});
    f.import({f.file("empty-array.json", "[]").string()}, {0});
    ReaderRunner::checkNoLeftovers(f.dir.path());
    f.runner.validateQueued();
}

TEST_CASE("import refuses times, ranks and base times out of range instead of wrapping them",
          "[robustness][import]") {
    ImportFixture f;
    // Three good events and five whose times overflow or lie beyond 2^62 ns.
    const std::string events = "{\"traceEvents\": [" + event("\"ts\": 10, \"dur\": 5") + ", " +
                               event("\"ts\": 20, \"dur\": 5") + ", " +
                               event("\"ts\": 30, \"dur\": 5") + ", " +
                               event("\"ts\": 1e30, \"dur\": 5") + ", " +
                               event("\"ts\": 9223372036854775807, \"dur\": 5") + ", " +
                               event("\"ts\": -9223372036854775807, \"dur\": 5") + ", " +
                               event("\"ts\": 4611686018427388, \"dur\": 5") + ", " +
                               event("\"ts\": 1.5e16, \"dur\": 5") + "]}";
    auto out = f.import({f.file("times.json", events).string()}, {0});
    CHECK(stat(out, "import_times_out_of_range") == 5);
    CHECK(TraceQuery(out).scalar("SELECT COUNT(*) FROM event") == 3);
    CHECK(TraceQuery(out).scalar("SELECT MAX(ts + dur) FROM event") == 25'000);

    // Times fine on their own, beyond 2^62 ns once the base time is added (it comes last).
    const std::string late = "{\"traceEvents\": [" + event("\"ts\": 10, \"dur\": 5") + ", " +
                             event("\"ts\": 4000000000000000, \"dur\": 5") +
                             "], \"baseTimeNanoseconds\": 1000000000000000000}";
    out = f.import({f.file("late-base.json", late).string()}, {0});
    CHECK(stat(out, "import_times_out_of_range") == 1);
    CHECK(TraceQuery(out).scalar("SELECT COUNT(*) FROM event") == 1);

    // Base times no trace can have: the file is refused.
    for (const char* base : {"-5", "9223372036854775807", "1e25", "18446744073709551615"}) {
        INFO(base);
        const std::string text = "{\"traceEvents\": [" + event("\"ts\": 10, \"dur\": 5") +
                                 "], \"baseTimeNanoseconds\": " + base + "}";
        f.import({f.file("base.json", text).string()}, {2}, "baseTimeNanoseconds");
    }

    // Ranks and world sizes beyond 32 bits or negative: the file is ranked by its order instead.
    const std::string a =
        "{\"distributedInfo\": {\"rank\": -3, \"world_size\": 0}, \"traceEvents\": [" +
        event("\"ts\": 10, \"dur\": 5") + "]}";
    const std::string b =
        "{\"distributedInfo\": {\"rank\": 1099511627776, \"world_size\": 1099511627777},"
        " \"traceEvents\": [" +
        event("\"ts\": 10, \"dur\": 5") + "]}";
    auto ranked = f.runner.run({hpcprofBinary(), "import", f.file("a.json", a).string(),
                                f.file("b.json", b).string(), "-o",
                                (f.dir.path() / "ranks.hpcprof").string()},
                               {0});
    CHECK_THAT(ranked.err, Catch::Contains("claims rank -3") &&
                               Catch::Contains("claims rank 1099511627776") &&
                               Catch::Contains("world size of 1099511627777"));
    TraceQuery q((f.dir.path() / "ranks.hpcprof").string());
    CHECK(q.rows("SELECT rank, rank_source, IFNULL(world_size, -1) FROM process ORDER BY id") ==
          std::vector<std::string>{"0|file order|-1", "1|file order|-1"});
    ReaderRunner::checkNoLeftovers(f.dir.path());
    f.runner.validateQueued();
}

TEST_CASE("names with control characters from an import stay out of the terminal",
          "[robustness][import]") {
    ImportFixture f;
    // JSON escapes put ESC, BEL, CR and C1 controls in names: the reports show them as \xNN.
    const std::string text =
        "{\"traceEvents\": [" +
        event("\"ts\": 10, \"dur\": 5, \"name\": \"k\\u001b[31mred\\u0007\\r\\u009b1m\"") + "]}";
    auto out = f.import({f.file("esc.json", text).string()}, {0});
    auto json =
        f.runner.run({hpcprofBinary(), "report", out, "--format", "json"}, {0}, Output::Json);
    CHECK(nlohmann::json::parse(json.out)["top"]["kernels"][0]["name"] ==
          "k\\x1B[31mred\\x07\\x0D\\xC2\\x9B1m");
    f.runner.validateQueued();
}

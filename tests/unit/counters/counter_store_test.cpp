// SPDX-License-Identifier: MIT
// Store step for counter records: hand-written raw files (definitions, samples split over two
// records, a process-wide counter, an unavailable counter) -> counter tracks, derived rates,
// metadata `counters`, stats and warnings, with exact values.
#include <catch2/catch.hpp>

#include <cstring>
#include <fstream>

#include "hpcprof/store/merge.hpp"
#include "merge_raw.hpp"
#include "process_runner.hpp"
#include "raw_builder.hpp"
#include "trace_query.hpp"

using namespace hpcprof;
namespace raw = hpcprof::schema::raw;

namespace {

std::array<char, 64> def(uint32_t nameId, uint8_t slot, raw::CounterSource src, raw::CounterUnit unit,
                         uint32_t reasonId = 0, uint32_t flags = 0) {
    raw::CounterDefRecord d{};
    d.kind = raw::RecordKind::CounterDef;
    d.source = src;
    d.slot = slot;
    d.unit = unit;
    d.nameId = nameId;
    d.reasonId = reasonId;
    d.flags = flags;
    d.onlineCpus = 8;
    d.affinityCpus = 4;
    d.periodNs = 10'000'000;
    std::array<char, 64> out;
    std::memcpy(out.data(), &d, 64);
    return out;
}

std::array<char, 64> sample(int32_t tid, uint64_t ts, uint8_t first, std::vector<uint64_t> values) {
    raw::CounterRecord r{};
    r.kind = raw::RecordKind::Counter;
    r.trigger = raw::CounterTrigger::Timer;
    r.first = first;
    r.count = uint8_t(values.size());
    r.tid = tid;
    r.ts = ts;
    for (size_t i = 0; i < 6; ++i) r.values[i] = i < values.size() ? values[i] : raw::kCounterMissing;
    std::array<char, 64> out;
    std::memcpy(out.data(), &r, 64);
    return out;
}

void append(const std::filesystem::path& file, const std::vector<std::array<char, 64>>& recs) {
    {
        std::ofstream f(file, std::ios::binary | std::ios::app);
        for (const auto& r : recs) f.write(r.data(), 64);
    }
    // Like the agent, the header accounts for the new slots (the store reads no further).
    uint64_t capacity = (std::filesystem::file_size(file) - raw::kHeaderSize) / raw::kRecordSize;
    std::fstream f(file, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(offsetof(raw::ThreadFileHeader, capacity));
    f.write(reinterpret_cast<const char*>(&capacity), sizeof capacity);
}

} // namespace

TEST_CASE("store writes counter tracks, derived utilisation and the reasons counters are missing",
          "[counters][store]") {
    test::TempDir dir;
    const int64_t start = 1'000'000'000;
    auto h = test::makeProcessHeader(500, start, 0);
    test::RawThreadBuilder main(500);
    main.string(1, "task_clock").string(2, "cpu_wait").string(3, "PAPI_TOT_INS")
        .string(4, "perf_event: no PMU").string(5, "sde:::HPCTEST::ops");
    test::RawThreadBuilder sampler(501);
    auto folder = test::writeRawProcess(dir.path() / "raw", h, {main, sampler});
    // 7 slots, so a sample spans two records (slots 0-5, 6). task_clock = slot 0, cpu_wait =
    // slot 6, the SDE = slot 1 (process-wide).
    append(folder / "thread-500",
           {def(1, 0, raw::CounterSource::PerfSw, raw::CounterUnit::Ns),
            def(2, 6, raw::CounterSource::Schedstat, raw::CounterUnit::Ns, 0, raw::kCounterFallback),
            def(5, 1, raw::CounterSource::Papi, raw::CounterUnit::Count, 0, raw::kCounterProcessWide),
            def(3, raw::kNoCounterSlot, raw::CounterSource::None, raw::CounterUnit::Count, 4)});
    const uint64_t t0 = uint64_t(start) + 1'000'000;
    auto m = raw::kCounterMissing;
    append(folder / "thread-501",
           {sample(500, t0, 0, {100, m, m, m, m, m}), sample(500, t0, 6, {0}),
            sample(500, t0 + 2'000'000, 0, {2'000'100, m, m, m, m, m}), sample(500, t0 + 2'000'000, 6, {500'000}),
            // 4 ms later the thread had used 1 ms of CPU and waited 3 ms
            sample(500, t0 + 6'000'000, 0, {3'000'100, m, m, m, m, m}), sample(500, t0 + 6'000'000, 6, {3'500'000}),
            sample(0, t0 + 6'000'000, 0, {m, 1000, m, m, m, m})});
    // The sampler thread names itself; it carried no events, so it is not a timeline.
    {
        std::fstream f(folder / "thread-501", std::ios::binary | std::ios::in | std::ios::out);
        f.seekp(offsetof(raw::ThreadFileHeader, threadName));
        f.write("hpcprof-counter", 16);
    }
    auto r = test::mergeRaw(dir);
    REQUIRE(r.warnings.size() == 1);
    CHECK(r.warnings[0] == "counters not counted on this machine: PAPI_TOT_INS (perf_event: no PMU)");

    test::TraceQuery q(dir / "t.hpcprof");
    CHECK(q.rows("SELECT tid, counter, unit, ts_ns, value FROM counter_view WHERE counter = 'task_clock'"
                 " ORDER BY ts_ns") ==
          std::vector<std::string>{"500|task_clock|ns|1000000|100.0", "500|task_clock|ns|3000000|2000100.0",
                                   "500|task_clock|ns|7000000|3000100.0"});
    CHECK(q.rows("SELECT ts_ns, value FROM counter_view WHERE counter = 'cpu_utilization' ORDER BY ts_ns") ==
          std::vector<std::string>{"3000000|1.0", "7000000|0.25"});
    CHECK(q.rows("SELECT ts_ns, value FROM counter_view WHERE counter = 'cpu_wait_fraction' ORDER BY ts_ns") ==
          std::vector<std::string>{"3000000|0.25", "7000000|0.75"});
    CHECK(q.rows("SELECT rank, tid IS NULL, value FROM counter_view WHERE counter = 'sde:::HPCTEST::ops'") ==
          std::vector<std::string>{"0|1|1000.0"});
    CHECK(q.scalar("SELECT COUNT(*) FROM thread") == 1);
    CHECK(q.scalar("SELECT COUNT(*) FROM track") == 1);
    CHECK(q.scalar("SELECT value FROM stats WHERE name = 'counters_unavailable'") == 1);
    std::string meta = q.text("SELECT value FROM metadata WHERE key = 'counters'");
    CHECK(meta.find("{\"counter\":\"PAPI_TOT_INS\",\"processes\":1,\"reason\":\"perf_event: no PMU\"}") !=
          std::string::npos);
    CHECK(meta.find("{\"counter\":\"task_clock\",\"processes\":1,\"source\":\"perf_sw\"}") != std::string::npos);
    CHECK(meta.find("\"hosts\":[{\"host\":\"node1\",\"online_cpus\":8,\"affinity_cpus\":4}]") != std::string::npos);
}

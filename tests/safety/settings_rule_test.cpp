// SPDX-License-Identifier: MIT
// settings.def and sources.def: the one rule for HPCPROF_* values (the agent falls back to the
// default for a value the rule rejects, never to a wrapped number), the source list, and the
// user guide kept in step with both.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "hpcprof/launch/config.hpp"
#include "hpcprof/launch/settings.hpp"

using namespace hpcprof::agent;

namespace {

bool valid(Setting s, const char* text) { return settingValueValid(settingSpec(s), text); }

/// Sets the variables for the lifetime of the guard, then unsets them.
struct EnvGuard {
    std::vector<std::string> names;
    EnvGuard(std::initializer_list<std::pair<const char*, const char*>> values) {
        for (const auto& [name, value] : values) {
            setenv(name, value, 1);
            names.push_back(name);
        }
    }
    ~EnvGuard() {
        for (const auto& n : names) unsetenv(n.c_str());
    }
};

std::string userGuide() {
    std::ifstream in(std::string(HPCPROF_TEST_SOURCE_DIR) + "/docs/user-guide.md");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The user guide's table row that names `variable` in backquotes ("" if none).
std::string guideRow(const std::string& guide, const std::string& variable) {
    std::istringstream lines(guide);
    for (std::string line; std::getline(lines, line);)
        if (line.rfind("|", 0) == 0 && line.find("`" + variable + "`") != std::string::npos)
            return line;
    return {};
}

} // namespace

TEST_CASE("numbers are plain decimals inside the setting's range", "[safety][settings]") {
    CHECK(valid(Setting::ThreadBufferMb, "1"));
    CHECK(valid(Setting::ThreadBufferMb, "1048576"));
    CHECK(valid(Setting::ThreadBufferMb, "+64"));
    for (const char* bad : {"-1", "0", "1048577", "17592186044416", "99999999999999999999999",
                            "1e3", "0x10", " 5", "5 ", "5MB", "", "-", "1.5", "nan", "inf"})
        CHECK_FALSE(valid(Setting::ThreadBufferMb, bad));
    CHECK(valid(Setting::ChunkKb, "4"));
    CHECK_FALSE(valid(Setting::ChunkKb, "3"));
    CHECK_FALSE(valid(Setting::ChunkKb, "-5"));
    CHECK(valid(Setting::CounterPeriodMs, "0"));
    CHECK(valid(Setting::CounterPeriodMs, "0.5"));
    CHECK(valid(Setting::CounterPeriodMs, "60000"));
    for (const char* bad : {"-5", "-0.5", "60000.5", "1e9", "nan", "inf", ".", "1..2"})
        CHECK_FALSE(valid(Setting::CounterPeriodMs, bad));
    CHECK(valid(Setting::ClockSkewNs, "-50000000"));
    CHECK_FALSE(valid(Setting::ClockSkewNs, "abc"));
    CHECK(valid(Setting::RdmaEventRate, "0"));
    CHECK_FALSE(valid(Setting::RdmaEventRate, "4294967296")); // used to wrap to 0 = keep all
    CHECK_FALSE(valid(Setting::NcclPluginMask, "-1"));
}

TEST_CASE("words and lists accept only their words", "[safety][settings]") {
    CHECK(valid(Setting::Clock, "monotonic"));
    CHECK_FALSE(valid(Setting::Clock, "MONOTONIC"));
    CHECK_FALSE(valid(Setting::Clock, "monotonic,tsc"));
    CHECK(valid(Setting::Sources, "io,mpi"));
    CHECK(valid(Setting::Sources, "io,,counters,")); // empty items are skipped
    CHECK_FALSE(valid(Setting::Sources, "io,bogus"));
    CHECK_FALSE(valid(Setting::Sources, ","));
    CHECK(valid(Setting::CounterBoundaries, "mpi,io"));
    CHECK_FALSE(valid(Setting::CounterBoundaries, "mpi,bogus"));
    CHECK(valid(Setting::CudaApi, "runtime"));
    CHECK_FALSE(valid(Setting::CudaApi, "driver-only"));
    std::string longDir(1024, 'x');
    CHECK_FALSE(valid(Setting::RawDir, longDir.c_str()));
    CHECK(valid(Setting::RawDir, longDir.substr(1).c_str()));
}

TEST_CASE("the agent uses the default for every value its rule rejects", "[safety][settings]") {
    Config defaults;
    {
        EnvGuard env{{"HPCPROF_THREAD_BUFFER_MB", "17592186044416"}, // << 20 used to wrap to 0
                     {"HPCPROF_CHUNK_KB", "-5"},                     // used to wrap to 2^64-5 KB
                     {"HPCPROF_PROVISION_HELPER", "2"},
                     {"HPCPROF_TSC_HZ", "-3000000000"},
                     {"HPCPROF_CLOCK_SKEW_NS", "12abc"},
                     {"HPCPROF_CLOCK", "sundial"},
                     {"HPCPROF_RDMA_EVENT_RATE", "4294967296"}};
        Config c = readConfig();
        CHECK(c.threadBufferBytes == defaults.threadBufferBytes);
        CHECK(c.chunkBytes == defaults.chunkBytes);
        CHECK(c.provisionHelper == defaults.provisionHelper);
        CHECK(c.tscHz == 0);
        CHECK(c.clockSkewNs == 0);
        CHECK(c.clockRequest == nullptr);
        CHECK(c.rdmaEventRate == defaults.rdmaEventRate);
    }
    {
        EnvGuard env{{"HPCPROF_THREAD_BUFFER_MB", "-1"}, {"HPCPROF_CHUNK_KB", "99999999999"}};
        Config c = readConfig();
        CHECK(c.threadBufferBytes == defaults.threadBufferBytes);
        CHECK(c.chunkBytes == defaults.chunkBytes);
    }
    {
        EnvGuard env{{"HPCPROF_THREAD_BUFFER_MB", "1048576"},
                     {"HPCPROF_CHUNK_KB", "4"},
                     {"HPCPROF_PROVISION_HELPER", "0"},
                     {"HPCPROF_TSC_HZ", "3000000000"},
                     {"HPCPROF_CLOCK", "monotonic"},
                     {"HPCPROF_RDMA_EVENT_RATE", "0"}};
        Config c = readConfig();
        CHECK(c.threadBufferBytes == 1ull << 40);
        CHECK(c.chunkBytes == 4096);
        CHECK_FALSE(c.provisionHelper);
        CHECK(c.tscHz == 3'000'000'000ull);
        CHECK(std::string(c.clockRequest) == "monotonic");
        CHECK(c.rdmaEventRate == 0);
    }
    {
        EnvGuard env{{"HPCPROF_COUNTER_PERIOD_MS", "-5"}, {"HPCPROF_COUNTER_MIN_GAP_US", "-1"}};
        CHECK(numberSetting(Setting::CounterPeriodMs) == 10);
        CHECK(numberSetting(Setting::CounterMinGapUs) == 1000);
    }
    {
        EnvGuard env{{"HPCPROF_COUNTER_PERIOD_MS", "2.5"}};
        CHECK(numberSetting(Setting::CounterPeriodMs) == 2.5);
    }
}

TEST_CASE("every source in sources.def parses to its own bit, and unknown names are found",
          "[safety][settings]") {
    uint32_t all = 0;
    for (const auto& s : kSources) {
        CHECK(parseSources(s.name) == uint32_t(s.bit));
        CHECK((all & uint32_t(s.bit)) == 0); // one bit per source
        all |= uint32_t(s.bit);
    }
    CHECK(parseSources("counters") == uint32_t(SourceBit::Counters));
    CHECK(parseSources("all") == ~0u);
    size_t len = 0;
    CHECK(firstUnknownSource("io,counters,all", &len) == nullptr);
    const char* list = "io,bogus,mpi";
    const char* bad = firstUnknownSource(list, &len);
    REQUIRE(bad != nullptr);
    CHECK(std::string(bad, len) == "bogus");
}

TEST_CASE("the user guide documents every setting with its default and every source",
          "[safety][settings][docs]") {
    std::string guide = userGuide();
    REQUIRE_FALSE(guide.empty());
    for (const auto& spec : kSettings) {
        std::string row = guideRow(guide, spec.variable);
        INFO(spec.variable);
        CHECK_FALSE(row.empty());
        if (spec.kind == SettingKind::Integer || spec.kind == SettingKind::Decimal) {
            std::string fallback = std::to_string(static_cast<long long>(spec.fallback));
            if (spec.fallback != 0) CHECK(row.find(fallback) != std::string::npos);
        }
    }
    std::string sourcesRow = guideRow(guide, "HPCPROF_SOURCES");
    for (const auto& s : kSources) {
        INFO(s.name);
        CHECK(sourcesRow.find(std::string("`") + s.name + "`") != std::string::npos);
    }
}

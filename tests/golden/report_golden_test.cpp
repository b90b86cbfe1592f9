// SPDX-License-Identifier: MIT
// Report golden test: fixed raw captures of the bundled samples (tests/golden/raw, made by
// capture_raw.sh) and the real Kineto traces are converted, imported and analysed by this build;
// their JSON reports must equal tests/golden/reports byte for byte. A change to the store, the
// analysis or the report that moves any number shows here. When the change is intended,
// scripts/update_golden.sh rewrites the expected files and the diff shows what moved.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"

using namespace hpcprof::test;
namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(HPCPROF_TEST_TESTS_DIR) / "golden";

/// The JSON report of `trace` with the temporary folder's path replaced by "TRACE_DIR".
std::string reportJson(const TempDir& dir, const std::string& trace) {
    auto r = runProcess({hpcprofBinary(), "report", trace, "--format", "json"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    std::string out = r.out;
    const std::string prefix = dir.path().string();
    for (size_t at = out.find(prefix); at != std::string::npos; at = out.find(prefix, at))
        out.replace(at, prefix.size(), "TRACE_DIR");
    return out;
}

void checkAgainstGolden(const std::string& name, const std::string& report) {
    const std::string expected = readWholeFile((kGolden / "reports" / (name + ".json")).string());
    INFO("report of " << name << " differs from tests/golden/reports/" << name
                      << ".json (intended? run scripts/update_golden.sh and review the diff)");
    REQUIRE_FALSE(expected.empty());
    CHECK(report == expected);
}

} // namespace

TEST_CASE("the JSON reports of the samples' fixed captures are the golden ones", "[golden][report]") {
    std::vector<fs::path> captures;
    for (const auto& e : fs::directory_iterator(kGolden / "raw"))
        if (e.path().string().ends_with(".tar.gz")) captures.push_back(e.path());
    std::sort(captures.begin(), captures.end());
    REQUIRE(captures.size() >= 9);
    for (const auto& tarball : captures) {
        const std::string name = tarball.filename().string().substr(0, tarball.filename().string().size() - 7);
        SECTION(name) {
            TempDir dir;
            auto x = runProcess({"tar", "-xzf", tarball.string(), "-C", dir.path().string()});
            REQUIRE(x.exitCode == 0);
            auto m = runProcess({hpcprofBinary(), "merge", dir / (name + ".hpcprof.raw"), "-o", dir / "t.hpcprof"});
            INFO(m.err);
            REQUIRE(m.exitCode == 0);
            checkAgainstGolden(name, reportJson(dir, dir / "t.hpcprof"));
        }
    }
}

TEST_CASE("the JSON report of the real Kineto traces is the golden one", "[golden][report]") {
    TempDir dir;
    const fs::path data = fs::path(HPCPROF_TEST_TESTS_DIR) / "data" / "kineto";
    auto r = runProcess({hpcprofBinary(), "import", (data / "sampled_rank-0.json.gz").string(),
                         (data / "sampled_rank-1.json.gz").string(), "-o", dir / "t.hpcprof"});
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    checkAgainstGolden("kineto_sampled", reportJson(dir, dir / "t.hpcprof"));
}

TEST_CASE("in every golden report the findings' exclusive gains add up to at most the runtime",
          "[golden][report]") {
    int reports = 0;
    for (const auto& e : fs::directory_iterator(kGolden / "reports")) {
        if (e.path().extension() != ".json") continue;
        ++reports;
        const auto doc = nlohmann::json::parse(readWholeFile(e.path().string()));
        const int64_t runtime = doc["pop"]["runtime_ns"].get<int64_t>();
        int64_t sum = 0;
        for (const auto& f : doc["findings"]) {
            INFO(e.path().filename().string() << ": " << f["id"]);
            CHECK(f["exclusive_gain_ns"].get<int64_t>() >= 0);
            CHECK(f["exclusive_gain_ns"].get<int64_t>() <= f["estimated_gain_ns"].get<int64_t>());
            sum += f["exclusive_gain_ns"].get<int64_t>();
        }
        INFO(e.path().filename().string() << ": exclusive gains " << sum << " ns, runtime " << runtime << " ns");
        CHECK(sum <= runtime);
        CHECK(sum <= doc["summary"]["wall_ns"].get<int64_t>());
        CHECK(doc["summary"]["findings_gain_ns"].get<int64_t>() == sum);
    }
    CHECK(reports >= 10);
}

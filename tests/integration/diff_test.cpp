// SPDX-License-Identifier: MIT
// The diff property test (issue 19): a deterministic MPI program (samples/mpi/mpi_phases.c, 2
// ranks: 800 ms of compute, 1 MiB written and read back per rank in files relative to its working
// directory, 50 allreduces) is run three times under hpcprof run, each in its own folder. Every
// pair diffs to zero regressions and `--fail-on 'regressions > 0'` passes; the same program with
// its compute phase 20 % longer diffs to exactly that phase's regressions, and the gate fails.
#include <catch2/catch.hpp>

#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"
#include "trace_query.hpp"

using namespace hpcprof::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kComputeNs = 800'000'000; // mpi_phases' compute phase at 100 %
constexpr int64_t kFileBytes = 1 << 20;     // written, then read, per rank

/// Runs mpi_phases PCT on 2 ranks under hpcprof run with `dir` (created) as working directory;
/// returns the trace's path.
std::string profileIn(const TempDir& root, const std::string& name, int pct) {
    const fs::path dir = root.path() / name;
    fs::create_directory(dir);
    const std::string trace = root / (name + ".hpcprof");
    auto r = runProcess({"sh", "-c", "cd \"$0\" && exec \"$@\"", dir.string(), hpcprofBinary(), "run", "-o", trace,
                         "--", "mpirun", "-np", "2", sampleBinary("mpi_phases"), std::to_string(pct)},
                        kMpiTestEnv);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "mpi_phases done: compute_ms=" + std::to_string(800 * pct / 100) + " bytes=1048576\n");
    // The ranks know their folder, and their files are recorded under it exactly.
    TraceQuery q(trace);
    const std::string cwd = fs::canonical(dir).string();
    CHECK(q.rows("SELECT rank, cwd FROM process WHERE rank IS NOT NULL ORDER BY rank") ==
          std::vector<std::string>{"0|" + cwd, "1|" + cwd});
    for (int rank = 0; rank < 2; ++rank) {
        const std::string object = cwd + "/phases-rank" + std::to_string(rank) + ".dat";
        CHECK(q.rows("SELECT name, COUNT(*), SUM(bytes) FROM event_view WHERE object = '" + object +
                     "' AND name IN ('write', 'read') GROUP BY name ORDER BY name") ==
              std::vector<std::string>{"read|16|" + std::to_string(kFileBytes), "write|16|" + std::to_string(kFileBytes)});
    }
    return trace;
}

struct Diff {
    int exitCode = -1;
    json doc;
};

// The absolute noise floor for these 1.2 s runs: MPI_Init alone takes 210-320 ms on this shared,
// oversubscribed 2-core machine, a spread of up to ~100 ms per rank between identical runs (the
// default floor, 5 ms or 1 % of the window, is meant for real runs of minutes, docs/reports.md).
const std::string kFloorNs = "100000000";

Diff diffJson(const std::string& base, const std::string& next) {
    auto r = runProcess({hpcprofBinary(), "diff", base, next, "--format", "json", "--min-change-ns", kFloorNs,
                         "--fail-on", "regressions > 0"});
    INFO(r.err);
    REQUIRE((r.exitCode == 0 || r.exitCode == 3));
    return {r.exitCode, json::parse(r.out)};
}

/// "scope/name" of every row with verdict `verdict`.
std::set<std::string> rowsWith(const json& doc, const std::string& verdict) {
    std::set<std::string> out;
    for (const auto& row : doc["rows"])
        if (row["verdict"] == verdict) out.insert(row["scope"].get<std::string>() + "/" + row["name"].get<std::string>());
    return out;
}

const json* row(const json& doc, const std::string& scope, const std::string& name) {
    for (const auto& r : doc["rows"])
        if (r["scope"] == scope && r["name"] == name) return &r;
    return nullptr;
}

/// A row from or to zero has no percentage: "new" or "gone", never "+0.0%" or "-100.0%".
void checkNewAndGone(const json& doc) {
    for (const auto& r : doc["rows"]) {
        const double base = r["base"].get<double>(), next = r["new"].get<double>();
        INFO(r.dump());
        if (base == 0 && next != 0) CHECK((r["change"] == "new" && r["delta_pct"].is_null()));
        if (base != 0 && next == 0) CHECK((r["change"] == "gone" && r["delta_pct"].is_null()));
        if (base != 0 && next != 0) CHECK(r["delta_pct"].is_number());
    }
}

/// Both runs' files of the program are one row each, matched by their relative path; no file
/// of the runs' folders is left with its absolute path.
void checkFilesMatched(const json& doc, const TempDir& root) {
    for (const char* name : {"phases-rank0.dat", "phases-rank1.dat"}) {
        const json* r = row(doc, "file", name);
        INFO(name);
        REQUIRE(r != nullptr);
        CHECK((*r)["base"].get<double>() > 0);
        CHECK((*r)["new"].get<double>() > 0);
    }
    const std::string folders = fs::canonical(root.path()).string();
    for (const auto& r : doc["rows"]) {
        INFO(r.dump());
        CHECK(r["name"].get<std::string>().find(folders) == std::string::npos);
    }
}

} // namespace

// The floor is 100 ms (--min-change-ns) instead of the default 5 ms / 1 % of the window: on a
// shared 2-core machine the time before MPI_Init (the loader, counted as compute) moves by up to
// ~100 ms between identical runs. MPI start-up itself is setup, never a regression. On a quiet
// machine the defaults give 0 regressions too (docs/reports.md).
TEST_CASE("diff of the same program run in three folders: no regression; 20 % slower compute: exactly that",
          "[diff-property][integration][mpi][diff]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir root;
    const std::string runs[3] = {profileIn(root, "a", 100), profileIn(root, "b", 100), profileIn(root, "c", 100)};
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j) {
            if (i == j) continue;
            INFO("diff " << runs[i] << " " << runs[j]);
            Diff d = diffJson(runs[i], runs[j]);
            INFO(d.doc.dump(1));
            CHECK(d.exitCode == 0);
            CHECK(d.doc["summary"]["regressions"] == 0);
            CHECK(rowsWith(d.doc, "regression").empty());
            CHECK(d.doc["gates"][0]["failed"] == false);
            checkFilesMatched(d.doc, root);
            checkNewAndGone(d.doc);
        }

    const std::string slow = profileIn(root, "slow", 120);
    Diff d = diffJson(runs[0], slow);
    INFO(d.doc.dump(1));
    CHECK(d.exitCode == 3);
    // The compute phase, on each rank and for the job, and the job window it lengthens; nothing else.
    CHECK(rowsWith(d.doc, "regression") ==
          std::set<std::string>{"class/compute", "rank/rank 0 compute", "rank/rank 1 compute", "summary/wall_ns"});
    CHECK(rowsWith(d.doc, "improvement").empty());
    CHECK(d.doc["summary"]["regressions"] == 4);
    for (const char* name : {"rank 0 compute", "rank 1 compute"}) {
        const json* r = row(d.doc, "rank", name);
        REQUIRE(r != nullptr);
        INFO(name);
        // The program spins 160 ms more per rank: its own figure within 10 %.
        CHECK((*r)["delta"].get<double>() == Approx(0.2 * kComputeNs).epsilon(0.1));
        CHECK((*r)["delta_pct"].get<double>() == Approx(20.0).epsilon(0.1));
        CHECK((*r)["change"].get<std::string>().rfind("+", 0) == 0);
    }
    checkFilesMatched(d.doc, root);
    checkNewAndGone(d.doc);

    // Every format says the same: the regressed rows, their change, the noise floor.
    CHECK(d.doc["summary"]["noise_floor"]["ns"] == 100'000'000);
    auto text = runProcess({hpcprofBinary(), "diff", runs[0], slow, "--min-change-ns", kFloorNs, "--fail-on",
                            "regressions > 0"});
    CHECK(text.exitCode == 3);
    CHECK_THAT(text.out, Catch::Contains("4 regression(s)") && Catch::Contains("noise floor"));
    size_t marks = 0;
    for (size_t at = text.out.find("REGRESSION"); at != std::string::npos; at = text.out.find("REGRESSION", at + 1))
        ++marks;
    CHECK(marks == 4);
    const std::string rank1Change = (*row(d.doc, "rank", "rank 1 compute"))["change"];
    for (const char* format : {"md", "html", "junit"}) {
        auto f = runProcess({hpcprofBinary(), "diff", runs[0], slow, "--format", format, "--min-change-ns", kFloorNs});
        INFO(format << "\n" << f.out);
        CHECK(f.exitCode == 0);
        CHECK_THAT(f.out, Catch::Contains("rank 1 compute") && Catch::Contains(rank1Change));
        CHECK_THAT(f.out, Catch::Contains(std::string(format) == "junit" ? "failures=\"4\"" : "noise floor"));
    }
}

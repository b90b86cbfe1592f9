// SPDX-License-Identifier: MIT
// File classes on a real Open MPI run (docs/analysis.md, "File classes"): a program whose only
// I/O is a checkpoint of 8 x 1 MiB per rank. Open MPI reads /proc, /sys and its configuration
// in small requests at MPI_Init; the report must lead with the checkpoint files, list the rest
// with their class, and fire no small-I/O finding on the runtime's reads.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "process_runner.hpp"

using namespace hpcprof::test;
using nlohmann::json;

TEST_CASE("an MPI checkpoint's files lead the report, the runtime's start-up reads are classed apart",
          "[integration][mpi][files]") {
    if (!haveMpirun()) {
        WARN("SKIPPED: mpirun not found");
        return;
    }
    TempDir dir;
    const std::string trace = dir / "t.hpcprof";
    auto r = runProcess({hpcprofBinary(), "run", "-o", trace, "--", "mpirun", "-np", "2",
                         sampleBinary("mpi_checkpoint"), dir.path().string()},
                        kMpiTestEnv);
    INFO(r.err);
    REQUIRE(r.exitCode == 0);
    CHECK(r.out == "mpi_checkpoint: 16777216 bytes written, 8388608 read back by rank 0\n");
    auto rep = runProcess({hpcprofBinary(), "report", trace, "--format", "json"});
    REQUIRE(rep.exitCode == 0);
    const json doc = json::parse(rep.out);

    // The two checkpoint files first, with exactly what the program wrote and read.
    const json& files = doc["top"]["files"];
    REQUIRE(files.size() >= 2);
    for (int i = 0; i < 2; ++i) {
        INFO(files[i].dump());
        CHECK(files[i]["class"] == "data");
        CHECK(files[i]["name"].get<std::string>().find("/checkpoint.") != std::string::npos);
        CHECK(files[i]["bytes"] == 2 * 8 * (1 << 20));
    }
    // Nothing else the program touched is data (mpirun's and the ranks' own I/O is the runtime's).
    int64_t dataFiles = 0, otherCalls = 0;
    for (const auto& c : doc["top"]["file_classes"]) {
        if (c["class"] == "data") dataFiles = c["files"].get<int64_t>();
        else otherCalls += c["calls"].get<int64_t>();
    }
    CHECK(dataFiles == 2);
    // Open MPI reads /proc and /sys (hwloc) and its configuration at start-up: classed apart.
    CHECK(otherCalls > 0);
    for (size_t i = 2; i < files.size(); ++i) CHECK(files[i]["class"] != "data");
    for (const auto& f : doc["findings"]) CHECK(f["id"] != "small-io");
    // The text report says which files are not the program's.
    auto text = runProcess({hpcprofBinary(), "report", trace});
    CHECK(text.out.find("Top files (the program's data)") != std::string::npos);
}

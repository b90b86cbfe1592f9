// SPDX-License-Identifier: MIT
#include "pack_twins.hpp"

#include <catch2/catch.hpp>

#include <filesystem>

namespace hpcprof::test {

namespace fs = std::filesystem;

PackTwins makePackTwins(const TempDir& dir, const std::string& name) {
    const std::string file = name + ".hpcprof";
    for (const char* form : {"plain", "columns", "whole"}) fs::create_directories(dir.path() / form);
    PackTwins t{dir / ("plain/" + file), dir / ("columns/" + file), dir / ("whole/" + file)};
    const std::string work = dir / (name + "-files");
    fs::create_directories(work);
    ProcessResult run;
    if (fs::exists(sampleBinary("mpi_demo")) && haveMpirun())
        run = runProcess({hpcprofBinary(), "run", "-q", "-o", t.plain, "--", "mpirun", "-np", "3",
                          sampleBinary("mpi_demo"), work},
                         kMpiTestEnv);
    else
        run = runProcess({hpcprofBinary(), "run", "-q", "-o", t.plain, "--", sampleBinary("io_sample"), work});
    INFO(run.out << run.err);
    REQUIRE(run.exitCode == 0);
    for (const auto& [packed, whole] : {std::pair{t.columns, false}, std::pair{t.whole, true}}) {
        std::vector<std::string> args = {hpcprofBinary(), "pack", t.plain, "-o", packed};
        if (whole) args.push_back("--whole");
        auto pack = runProcess(args);
        INFO(pack.err);
        REQUIRE(pack.exitCode == 0);
    }
    return t;
}

} // namespace hpcprof::test

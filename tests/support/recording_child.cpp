// SPDX-License-Identifier: MIT
#include "recording_child.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

#include "process_runner.hpp"
#include "runtime/recorder.hpp"

namespace hpcprof::test {

store::ThreadRecords recordInChild(const std::string& rawDir, const RecorderSettings& settings,
                                   const std::function<void()>& body) {
    const int code = runInChild([&] {
        setenv("HPCPROF_RAW_DIR", rawDir.c_str(), 1);
        setenv("HPCPROF_SOURCES", "all", 1);
        setenv("HPCPROF_COUNTERS", "none", 1);
        for (const auto& [name, value] : settings) setenv(name.c_str(), value.c_str(), 1);
        agent::ensureStarted();
        body();
        agent::markEnd(schema::raw::EndState::Exited, 0);
        return 0;
    });
    REQUIRE(code == 0);
    store::RawProblems problems;
    auto procs = store::listProcesses(rawDir, problems);
    REQUIRE(procs.ok());
    REQUIRE(procs->size() == 1);
    const auto& files = procs->front().threadFiles;
    REQUIRE(files.size() == 1);
    store::ThreadRecords t = store::readThreadFile(files.front(), problems);
    CHECK(problems.tornRecords == 0);
    CHECK(problems.unreadableFiles == 0);
    return t;
}

} // namespace hpcprof::test

// SPDX-License-Identifier: MIT
// Test support: the real Kineto traces of tests/data/kineto (two ranks of a real NCCL training
// job), imported into a temporary folder for the tests that check figures on them.
#pragma once

#include <catch2/catch.hpp>

#include <filesystem>
#include <optional>
#include <string>

#include "hpcprof/import/importer.hpp"
#include "process_runner.hpp"

namespace hpcprof::test {

inline const std::string kRealKinetoDir = std::string(HPCPROF_TEST_TESTS_DIR) + "/data/kineto";

/// Imports both real traces into `dir`/kineto.hpcprof and returns its path; nullopt (with a
/// SKIPPED warning) when the data is not there.
inline std::optional<std::string> importRealKineto(const TempDir& dir) {
    if (!std::filesystem::exists(kRealKinetoDir + "/sampled_rank-0.json.gz")) {
        WARN("SKIPPED: " << kRealKinetoDir << " is not there");
        return std::nullopt;
    }
    import::ImportOptions o;
    o.inputs = {kRealKinetoDir};
    o.output = dir / "kineto.hpcprof";
    REQUIRE(import::importTraces(o).ok());
    return o.output.string();
}

} // namespace hpcprof::test

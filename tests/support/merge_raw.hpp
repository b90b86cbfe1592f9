// SPDX-License-Identifier: MIT
// Test support for store tests: convert DIR/raw (written with raw_builder.hpp) into
// DIR/t.hpcprof and fail the test if the store refuses. Header-only: only the tests that link the
// store include it.
#pragma once

#include <catch2/catch.hpp>

#include "hpcprof/store/merge.hpp"
#include "process_runner.hpp"

namespace hpcprof::test {

inline store::MergeResult mergeRaw(const TempDir& dir) {
    store::MergeOptions o;
    o.rawDir = dir.path() / "raw";
    o.output = dir / "t.hpcprof";
    auto r = store::mergeRawDirectory(o);
    INFO(r.status().message());
    REQUIRE(r.ok());
    return r.value();
}

} // namespace hpcprof::test

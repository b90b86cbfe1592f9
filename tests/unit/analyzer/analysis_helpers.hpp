// SPDX-License-Identifier: MIT
// Test helpers around the analyzer's result: analyse a written trace (failing the test on an
// error), find a finding by rule id, read one of its evidence values.
#pragma once

#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include "hpcprof/analyzer/analyze.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "process_runner.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

namespace hpcprof::test {

inline analyzer::Analysis analyseFile(const std::string& path) {
    auto trace = analyzer::Trace::open(path);
    REQUIRE(trace.ok());
    auto a = analyzer::analyzeTrace(*trace);
    INFO(a.status().message());
    REQUIRE(a.ok());
    return std::move(a.value());
}

/// Builds a trace with `build` in a temporary folder and analyses it.
inline analyzer::Analysis analyseBuilt(const std::function<void(TraceBuilder&)>& build) {
    TraceBuilder b;
    build(b);
    TempDir dir;
    b.write(dir / "t.hpcprof");
    return analyseFile(dir / "t.hpcprof");
}

inline const analyzer::Finding* findFinding(const analyzer::Analysis& a, const std::string& id) {
    for (const auto& f : a.findings)
        if (f.id == id) return &f;
    return nullptr;
}

inline double findingEvidence(const analyzer::Finding& f, const std::string& key) {
    for (const auto& e : f.evidence)
        if (e.key == key) return e.value;
    FAIL("no evidence " << key);
    return 0;
}

} // namespace hpcprof::test

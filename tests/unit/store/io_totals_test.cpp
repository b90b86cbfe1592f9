// SPDX-License-Identifier: MIT
// The I/O totals the conversion sums while it writes (store::MergeResult::io, the run summary's
// input) are exactly what the analyzer computes from the finished trace, and give the same
// summary.
#include <catch2/catch.hpp>

#include <algorithm>
#include <tuple>

#include "hpcprof/analyzer/io_summary.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/store/merge.hpp"
#include "merge_raw.hpp"
#include "process_runner.hpp"
#include "raw_builder.hpp"

using namespace hpcprof;
using hpcprof::schema::Op;
namespace raw = hpcprof::schema::raw;
using test::RawThreadBuilder;

namespace {
uint16_t op(Op o) { return uint16_t(o); }

std::vector<schema::IoGroup> sorted(std::vector<schema::IoGroup> v) {
    auto key = [](const schema::IoGroup& g) {
        return std::tie(g.processId, g.function, g.path, g.kind, g.calls, g.durNs, g.bytes, g.outerNs);
    };
    std::sort(v.begin(), v.end(), [&](const auto& a, const auto& b) { return key(a) < key(b); });
    return v;
}

bool same(const schema::IoGroup& a, const schema::IoGroup& b) {
    return a.processId == b.processId && a.function == b.function && a.path == b.path &&
           a.kind == b.kind && a.calls == b.calls && a.durNs == b.durNs && a.bytes == b.bytes &&
           a.outerNs == b.outerNs;
}
} // namespace

TEST_CASE("the conversion's I/O totals equal the trace's, nested calls, failures and no file included",
          "[store][summary]") {
    test::TempDir dir;
    auto h1 = test::makeProcessHeader(100, 0, 0);
    RawThreadBuilder a(100), b(101);
    a.string(1, "/data/a.bin").string(2, "pipe:[77]");
    // A write nested in a read (signal handler): both counted, only the read's time is outer.
    a.event({op(Op::PosixRead), 100, 300, 10, 1, 3})
        .event({op(Op::PosixWrite), 150, 160, 64, 2, 4})
        .event({op(Op::PosixPwrite64), 400, 410, 8, 1, 3, raw::kFlagHasOffset, 0, 4096})
        .event({op(Op::PosixWrite), 500, 530, -1, 1, 3, raw::kFlagFailed, 28 /*ENOSPC*/})
        .event({op(Op::PosixFsync), 600, 700, -1, 0, 5}) // no object
        .event({op(Op::MpiBarrier), 800, 900});         // not I/O
    b.string(1, "/data/a.bin").event({op(Op::PosixPwrite64), 450, 470, 16, 1, 3});
    test::writeRawProcess(dir.path() / "raw", h1, {a, b});
    auto h2 = test::makeProcessHeader(200, 0, 1);
    RawThreadBuilder c(200);
    c.string(9, "/data/a.bin").event({op(Op::PosixRead), 50, 80, 100, 9, 3});
    test::writeRawProcess(dir.path() / "raw", h2, {c});
    store::MergeResult r = test::mergeRaw(dir);

    auto trace = analyzer::Trace::open(dir / "t.hpcprof");
    REQUIRE(trace.ok());
    auto fromTrace = analyzer::ioGroups(trace.value());
    REQUIRE(fromTrace.ok());
    auto known = sorted(r.io), queried = sorted(fromTrace.value());
    REQUIRE(known.size() == queried.size());
    REQUIRE(known.size() == 6); // read, write x2 (two files), pwrite64 (both threads), fsync; rank 1's read
    for (size_t i = 0; i < known.size(); ++i) {
        INFO(i << ": " << known[i].function << " " << known[i].path);
        CHECK(same(known[i], queried[i]));
    }
    auto pw = std::find_if(known.begin(), known.end(), [](const auto& g) { return g.function == "pwrite64"; });
    REQUIRE(pw != known.end());
    CHECK(pw->calls == 2);
    CHECK(pw->bytes == 24);
    CHECK(pw->durNs == 30);
    auto nested = std::find_if(known.begin(), known.end(), [](const auto& g) { return g.kind == "pipe"; });
    REQUIRE(nested != known.end());
    CHECK(nested->outerNs == 0); // depth 1: inside the read
    CHECK(nested->durNs == 10);
    auto noFile = std::find_if(known.begin(), known.end(), [](const auto& g) { return g.function == "fsync"; });
    REQUIRE(noFile != known.end());
    CHECK(noFile->path == "(unknown)");
    CHECK(noFile->kind == "unknown");

    // The printed summary from either input is the same.
    auto s1 = analyzer::summarizeIo(trace.value(), r.io), s2 = analyzer::summarizeIo(trace.value());
    REQUIRE(s1.ok());
    REQUIRE(s2.ok());
    REQUIRE(s1->perProcess.size() == 2);
    REQUIRE(s2->perProcess.size() == 2);
    for (size_t i = 0; i < 2; ++i) {
        CHECK(s1->perProcess[i].calls == s2->perProcess[i].calls);
        CHECK(s1->perProcess[i].ioNs == s2->perProcess[i].ioNs);
        CHECK(s1->perProcess[i].bytesRead == s2->perProcess[i].bytesRead);
        CHECK(s1->perProcess[i].bytesWritten == s2->perProcess[i].bytesWritten);
    }
    CHECK(s1->perProcess[0].calls == 6);
    CHECK(s1->perProcess[0].bytesRead == 10);
    CHECK(s1->perProcess[0].bytesWritten == 64 + 8 + 16);
    REQUIRE(s1->topFiles.size() == s2->topFiles.size());
    for (size_t i = 0; i < s1->topFiles.size(); ++i) {
        CHECK(s1->topFiles[i].path == s2->topFiles[i].path);
        CHECK(s1->topFiles[i].ioNs == s2->topFiles[i].ioNs);
        CHECK(s1->topFiles[i].calls == s2->topFiles[i].calls);
    }
    CHECK(s1->events == s2->events);
}

// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "hpcprof/launch/config.hpp"

using namespace hpcprof::agent;

TEST_CASE("source lists parse to bits and reject unknown-only lists", "[agent][config]") {
    CHECK(parseSources("io") == uint32_t(SourceBit::Io));
    CHECK(parseSources("io,mpi") == (uint32_t(SourceBit::Io) | uint32_t(SourceBit::Mpi)));
    CHECK(parseSources("all") == ~0u);
    CHECK(parseSources("bogus") == 0u);
    CHECK(parseSources("") == 0u);
    CHECK(parseSources("bogus,io") == uint32_t(SourceBit::Io));
}

TEST_CASE("configuration comes from the environment with safe defaults", "[agent][config]") {
    unsetenv("HPCPROF_RAW_DIR");
    setenv("HPCPROF_CHUNK_KB", "3", 1); // below a page: outside the accepted range, the default
    Config c = readConfig();
    CHECK_FALSE(c.enabled);
    CHECK(c.chunkBytes == 1024u << 10);
    setenv("HPCPROF_RAW_DIR", "/tmp/x", 1);
    setenv("HPCPROF_THREAD_BUFFER_MB", "2", 1);
    setenv("HPCPROF_CHUNK_KB", "64", 1);
    setenv("HPCPROF_CLOCK_SKEW_NS", "-50000000", 1);
    c = readConfig();
    CHECK(c.enabled);
    CHECK(std::string(c.rawDir) == "/tmp/x");
    CHECK(c.threadBufferBytes == 2u << 20);
    CHECK(c.chunkBytes == 64u << 10);
    CHECK(c.clockSkewNs == -50'000'000);
    for (auto v : {"HPCPROF_RAW_DIR", "HPCPROF_THREAD_BUFFER_MB", "HPCPROF_CHUNK_KB",
                   "HPCPROF_CLOCK_SKEW_NS"})
        unsetenv(v);
}

// SPDX-License-Identifier: MIT
// Where a thread's raw file grows (agent/runtime/chunk_geometry.hpp): small first chunks
// doubling up to the configured chunk size, on page boundaries, cut at the record limit, and the
// same answer from sizeAt() (what the mappers use) and endOf() (what the recorder uses).
#include <catch2/catch.hpp>

#include <vector>

#include "runtime/chunk_geometry.hpp"

using hpcprof::agent::ChunkGeometry;

namespace {

/// Chunk boundaries as the mappers walk them: from slot 0, sizeAt() after sizeAt().
std::vector<uint64_t> boundaries(const ChunkGeometry& g, uint64_t upTo) {
    std::vector<uint64_t> out{0};
    while (out.back() < upTo) {
        uint64_t size = g.sizeAt(out.back());
        if (size == 0) break;
        out.push_back(out.back() + size);
    }
    return out;
}

} // namespace

TEST_CASE("a thread file starts with one page of records and doubles up to the chunk size",
          "[agent][chunks]") {
    ChunkGeometry g(64 * 1024, 1 << 24); // 64 KiB chunks = 1024 slots
    CHECK(g.firstSlots() == 64);
    CHECK(g.fullSlots() == 1024);
    CHECK(boundaries(g, 4096) ==
          std::vector<uint64_t>{0, 64, 128, 256, 512, 1024, 2048, 3072, 4096});
}

TEST_CASE("chunk sizes that are not a power of two of the first chunk still meet exactly",
          "[agent][chunks]") {
    ChunkGeometry g(12 * 1024, 1 << 20); // 192 slots: 64, 64, 128, then 192 at a time
    CHECK(boundaries(g, 1000) == std::vector<uint64_t>{0, 64, 128, 256, 448, 640, 832, 1024});
}

TEST_CASE("every chunk starts on a page of the file and endOf agrees with the mappers' walk",
          "[agent][chunks]") {
    for (uint64_t chunkKiB : {4, 8, 12, 64, 100, 1024, 4096}) {
        for (uint64_t limitMiB : {1, 3, 64}) {
            ChunkGeometry g(chunkKiB * 1024, limitMiB * (1 << 20) / 64);
            uint64_t maxSlots = limitMiB * (1 << 20) / 64;
            std::vector<uint64_t> b = boundaries(g, maxSlots);
            INFO("chunk " << chunkKiB << " KiB, limit " << limitMiB << " MiB");
            CHECK(b.back() == maxSlots); // the last chunk is cut at the limit, none goes past
            for (size_t i = 0; i + 1 < b.size(); ++i) {
                CHECK((4096 + b[i] * 64) % 4096 == 0); // mmap offsets stay page aligned
                CHECK(b[i + 1] - b[i] <= g.fullSlots());
                // Every slot of the chunk ends where the walk says it does.
                for (uint64_t slot : {b[i], (b[i] + b[i + 1]) / 2, b[i + 1] - 1})
                    CHECK(g.endOf(slot) == b[i + 1]);
            }
            CHECK(g.sizeAt(maxSlots) == 0);
        }
    }
}

TEST_CASE("an idle thread's file is three pages: header and two chunks of 64 records",
          "[agent][chunks]") {
    ChunkGeometry g(1 << 20, (1024ull << 20) / 64); // the defaults: 1 MiB chunks, 1 GiB limit
    uint64_t startSlots = g.endOf(g.firstSlots());  // what initThread maps
    CHECK(4096 + startSlots * 64 == 3 * 4096);
}

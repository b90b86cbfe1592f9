// SPDX-License-Identifier: MIT
// The conversion's allocator for big arrays: small arrays come from the heap, big ones start on
// a 2 MiB boundary (so that the kernel can back them with huge pages), keep their values when
// they grow, and hold exactly what was asked for.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "store/huge_page_allocator.hpp"

using hpcprof::store::HugePageAllocator;

namespace {

struct Record {
    uint64_t a, b, c;
};

} // namespace

TEST_CASE("big arrays start on a huge page and keep their values as they grow", "[unit][store]") {
    std::vector<Record, HugePageAllocator<Record>> v;
    v.reserve(10);
    CHECK(reinterpret_cast<uintptr_t>(v.data()) % 16 == 0);
    const size_t big = HugePageAllocator<Record>::kMinBytes / sizeof(Record) + 1;
    v.reserve(big);
    CHECK(reinterpret_cast<uintptr_t>(v.data()) % HugePageAllocator<Record>::kHugePage == 0);
    for (uint64_t i = 0; i < 3 * big; ++i) v.push_back({i, i * 3, ~i}); // grows twice more
    CHECK(reinterpret_cast<uintptr_t>(v.data()) % HugePageAllocator<Record>::kHugePage == 0);
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < v.size(); ++i) wrong += v[i].a != i || v[i].b != i * 3 || v[i].c != ~i;
    CHECK(wrong == 0);
    CHECK(v.size() == 3 * big);
    v.clear();
    v.shrink_to_fit(); // unmapped: a leak or a bad length would show under ASan and valgrind
    CHECK(v.capacity() == 0);
}

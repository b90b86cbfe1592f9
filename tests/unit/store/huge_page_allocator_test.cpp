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

TEST_CASE("a freed big array's memory goes to the next one that fits, two kept at most", "[unit][store]") {
    namespace arrays = hpcprof::store::hugePageArrays;
    using Alloc = HugePageAllocator<Record>;
    const size_t big = Alloc::kMinBytes / sizeof(Record) + 1;
    Alloc a;
    arrays::releaseKept(); // what earlier tests freed
    CHECK(arrays::kept() == 0);
    // Three arrays live at once, then freed: two are kept, the oldest freed is unmapped.
    Record* first = a.allocate(big);
    Record* second = a.allocate(2 * big);
    Record* third = a.allocate(3 * big);
    CHECK(first != second);
    CHECK(second != third);
    first[big - 1] = {1, 2, 3}; // written to the end: the whole array is mapped
    third[3 * big - 1] = {4, 5, 6};
    a.deallocate(first, big);
    a.deallocate(second, 2 * big);
    a.deallocate(third, 3 * big);
    CHECK(arrays::kept() == 2);
    // The smallest kept mapping that fits: the second's for an array of its size or less (the
    // first's was unmapped), the third's for a bigger one; a bigger one yet gets a new mapping.
    Record* again = a.allocate(big);
    CHECK(again == second);
    Record* bigger = a.allocate(3 * big);
    CHECK(bigger == third);
    CHECK(arrays::kept() == 0);
    Record* fresh = a.allocate(4 * big);
    CHECK(reinterpret_cast<uintptr_t>(fresh) % Alloc::kHugePage == 0);
    fresh[4 * big - 1] = {7, 8, 9};
    // Freed with the size asked for, not the mapping's: the kept one is the mapping, whole.
    a.deallocate(again, big);
    again = a.allocate(2 * big);
    CHECK(again == second);
    again[2 * big - 1] = {1, 1, 1};
    a.deallocate(again, 2 * big);
    a.deallocate(bigger, 3 * big);
    a.deallocate(fresh, 4 * big);
    CHECK(arrays::kept() == 2);
    arrays::releaseKept();
    CHECK(arrays::kept() == 0);
}

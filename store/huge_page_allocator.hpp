// SPDX-License-Identifier: MIT
// An allocator for the conversion's big arrays (a thread's decoded events: 72 bytes each, tens
// of MB per million calls). Such an array is written once from start to end and freed whole,
// so 4 KiB pages only cost: one fault per page on first touch and a page-table walk per page
// when it is freed, a fifth of converting a 1 M-call I/O trace. Arrays of 4 MiB and more are
// mapped on their own and the kernel is asked to back them with 2 MiB pages (MADV_HUGEPAGE,
// honoured where transparent huge pages are "madvise" or "always"; elsewhere nothing changes).
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <memory>
#include <new>

namespace hpcprof::store {

template <class T>
struct HugePageAllocator {
    using value_type = T;
    static constexpr size_t kMinBytes = size_t(4) << 20;
    static constexpr size_t kHugePage = size_t(2) << 20;
    static constexpr size_t kPage = 4096;

    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) {}

    T* allocate(size_t n) {
        const size_t bytes = n * sizeof(T);
        if (bytes < kMinBytes) return std::allocator<T>().allocate(n);
        // One huge page more than asked, so that the array can start on a 2 MiB boundary; the
        // last part of the array, short of a whole huge page, gets small pages (no waste).
        const size_t length = roundUp(bytes, kPage), mapped = length + kHugePage;
        void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::bad_alloc();
        char* start = static_cast<char*>(p);
        char* aligned = start + (roundUp(reinterpret_cast<size_t>(start), kHugePage) - reinterpret_cast<size_t>(start));
        if (aligned > start) munmap(start, size_t(aligned - start));
        if (start + mapped > aligned + length) munmap(aligned + length, size_t(start + mapped - (aligned + length)));
        madvise(aligned, length, MADV_HUGEPAGE);
        return reinterpret_cast<T*>(aligned);
    }
    void deallocate(T* p, size_t n) {
        const size_t bytes = n * sizeof(T);
        if (bytes < kMinBytes) return std::allocator<T>().deallocate(p, n);
        munmap(p, roundUp(bytes, kPage));
    }

    template <class U>
    bool operator==(const HugePageAllocator<U>&) const { return true; }

private:
    static size_t roundUp(size_t v, size_t unit) { return (v + unit - 1) & ~(unit - 1); }
};

} // namespace hpcprof::store

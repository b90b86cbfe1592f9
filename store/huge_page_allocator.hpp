// SPDX-License-Identifier: MIT
// An allocator for the conversion's big arrays (a thread's decoded events: 72 bytes each, tens
// of MB per million calls). Such an array is written once from start to end and freed whole,
// so 4 KiB pages only cost: one fault per page on first touch and a page-table walk per page
// when it is freed, a fifth of converting a 1 M-call I/O trace. Arrays of 4 MiB and more are
// mapped on their own and the kernel is asked to back them with 2 MiB pages (MADV_HUGEPAGE,
// honoured where transparent huge pages are "madvise" or "always"; elsewhere nothing changes).
//
// A fresh mapping is zeroed by the kernel page by page as it is first touched: a quarter of a
// node's conversion, whose every thread decodes into an array of its own (one process is read
// while the one before is written). So the last two mappings freed are kept (up to 256 MiB
// each) and handed to the next arrays that fit in them: the conversion keeps two or three
// arrays' memory instead of zeroing one per thread.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace hpcprof::store {

/// The mappings behind HugePageAllocator's big arrays (huge_page_allocator.cpp).
namespace hugePageArrays {
inline constexpr size_t kMinBytes = size_t(4) << 20; ///< smaller arrays come from the heap
inline constexpr size_t kHugePage = size_t(2) << 20;
inline constexpr size_t kPage = 4096;
/// `bytes` (4 MiB or more) on a 2 MiB boundary: a kept mapping it fits in, else a new one;
/// nullptr when none can be mapped.
void* take(size_t bytes);
/// The array at `p`, of the `bytes` asked for, freed: kept for a later take, or unmapped.
void give(void* p, size_t bytes);
/// Mappings kept now (tests).
size_t kept();
/// Unmaps the kept mappings.
void releaseKept();
} // namespace hugePageArrays

template <class T>
struct HugePageAllocator {
    using value_type = T;
    static constexpr size_t kMinBytes = hugePageArrays::kMinBytes;
    static constexpr size_t kHugePage = hugePageArrays::kHugePage;

    HugePageAllocator() = default;
    template <class U>
    HugePageAllocator(const HugePageAllocator<U>&) {}

    T* allocate(size_t n) {
        const size_t bytes = n * sizeof(T);
        if (bytes < kMinBytes) return std::allocator<T>().allocate(n);
        void* p = hugePageArrays::take(bytes);
        if (!p) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, size_t n) {
        const size_t bytes = n * sizeof(T);
        if (bytes < kMinBytes) return std::allocator<T>().deallocate(p, n);
        hugePageArrays::give(p, bytes);
    }

    template <class U>
    bool operator==(const HugePageAllocator<U>&) const { return true; }
};

} // namespace hpcprof::store

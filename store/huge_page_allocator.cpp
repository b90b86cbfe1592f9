// SPDX-License-Identifier: MIT
#include "huge_page_allocator.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <vector>

namespace hpcprof::store::hugePageArrays {

namespace {

/// Freed mappings kept for the next arrays: the conversion has one thread's array being
/// written while the next process's are read.
constexpr size_t kKeep = 2;
/// A freed mapping bigger than this is unmapped: its memory is not held for arrays that may
/// never need it.
constexpr size_t kMaxKept = size_t(256) << 20;

size_t roundUp(size_t v, size_t unit) { return (v + unit - 1) & ~(unit - 1); }

/// `length` bytes (whole pages) on a 2 MiB boundary, backed by huge pages where the kernel
/// allows; nullptr when they cannot be mapped.
void* mapAligned(size_t length) {
    // One huge page more than asked, so that the array can start on a 2 MiB boundary; the last
    // part of the array, short of a whole huge page, gets small pages (no waste).
    const size_t mapped = length + kHugePage;
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    char* start = static_cast<char*>(p);
    char* aligned = start + (roundUp(reinterpret_cast<size_t>(start), kHugePage) - reinterpret_cast<size_t>(start));
    if (aligned > start) munmap(start, size_t(aligned - start));
    if (start + mapped > aligned + length) munmap(aligned + length, size_t(start + mapped - (aligned + length)));
    madvise(aligned, length, MADV_HUGEPAGE);
    return aligned;
}

struct Pool {
    std::mutex mu;
    std::map<void*, size_t> live;              ///< arrays handed out: their mapping's length
    std::vector<std::pair<void*, size_t>> kept; ///< freed mappings, oldest first

    void* take(size_t bytes) {
        const size_t length = roundUp(bytes, kPage);
        std::lock_guard<std::mutex> hold(mu);
        auto best = kept.end();
        for (auto it = kept.begin(); it != kept.end(); ++it)
            if (it->second >= length && (best == kept.end() || it->second < best->second)) best = it;
        void* p = nullptr;
        size_t got = length;
        if (best != kept.end()) {
            p = best->first;
            got = best->second;
            kept.erase(best);
        } else {
            p = mapAligned(length);
            if (!p && !kept.empty()) { // memory is short: give back what is kept, and try again
                release();
                p = mapAligned(length);
            }
            if (!p) return nullptr;
        }
        live[p] = got;
        return p;
    }

    void release() {
        for (auto& [q, n] : kept) munmap(q, n);
        kept.clear();
    }

    void give(void* p, size_t bytes) {
        std::lock_guard<std::mutex> hold(mu);
        auto it = live.find(p);
        const size_t length = it != live.end() ? it->second : roundUp(bytes, kPage);
        if (it != live.end()) live.erase(it);
        if (length > kMaxKept) {
            munmap(p, length);
            return;
        }
        kept.emplace_back(p, length);
        if (kept.size() > kKeep) {
            munmap(kept.front().first, kept.front().second);
            kept.erase(kept.begin());
        }
    }
};

/// Never destroyed: arrays may be freed by static destructors after it would be.
Pool& pool() {
    static Pool* p = new Pool;
    return *p;
}

} // namespace

void* take(size_t bytes) { return pool().take(bytes); }

void give(void* p, size_t bytes) { pool().give(p, bytes); }

size_t kept() {
    std::lock_guard<std::mutex> hold(pool().mu);
    return pool().kept.size();
}

void releaseKept() {
    std::lock_guard<std::mutex> hold(pool().mu);
    pool().release();
}

} // namespace hpcprof::store::hugePageArrays

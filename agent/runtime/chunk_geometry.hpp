// SPDX-License-Identifier: MIT
// Where a thread's raw file grows: the record slots each chunk of the file covers.
//
// A thread file starts small and doubles until its chunks reach the configured chunk size
// (HPCPROF_CHUNK_KB), then grows by that size:
//
//   slots  0    F    2F     4F          8F              G=F*2^k >= C     G+C      G+2C
//          | F  | F  |  2F  |     4F     |      ...       |       C       |    C    | ...
//
// F = kFirstChunkBytes / 64, C = the chunk size in slots. So a thread that records a few calls
// costs one page of records, a thread that records a lot maps C at a time as before, and every
// chunk starts on a page boundary of the file (F and C are whole pages), which mmap needs. Slot k
// always lives at file offset kHeaderSize + 64k: the chunks only decide when the file grows.
// The last chunk is cut at the thread's record limit. Pure functions: the recording thread and
// the provisioning helper compute the same chunks independently.
#pragma once

#include <cstdint>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::agent {

/// A thread file's first chunk: one page of records (64).
constexpr uint64_t kFirstChunkBytes = 4096;

class ChunkGeometry {
public:
    /// `chunkBytes`: the full chunk size (a whole number of pages); `maxSlots`: the record limit.
    constexpr ChunkGeometry(uint64_t chunkBytes, uint64_t maxSlots)
        : m_first(kFirstChunkBytes / schema::raw::kRecordSize),
          m_full(chunkBytes / schema::raw::kRecordSize < m_first
                     ? m_first
                     : chunkBytes / schema::raw::kRecordSize),
          m_growthEnd(growthEnd(m_first, m_full)), m_maxSlots(maxSlots) {}

    /// Slots of the chunk that starts at slot `from` (a chunk boundary), 0 at the limit.
    constexpr uint64_t sizeAt(uint64_t from) const {
        if (from >= m_maxSlots) return 0;
        uint64_t size = from < m_first ? m_first : from < m_full ? from : m_full;
        return size < m_maxSlots - from ? size : m_maxSlots - from;
    }

    /// End (exclusive) of the chunk that holds `slot`; m_maxSlots at most.
    constexpr uint64_t endOf(uint64_t slot) const {
        uint64_t end;
        if (slot < m_growthEnd) {
            end = m_first;
            while (end <= slot) end *= 2; // at most log2(C / F) steps
        } else {
            end = m_growthEnd + ((slot - m_growthEnd) / m_full + 1) * m_full;
        }
        return end < m_maxSlots ? end : m_maxSlots;
    }

    /// The full chunk size in slots.
    constexpr uint64_t fullSlots() const { return m_full; }
    /// The first chunk's size in slots.
    constexpr uint64_t firstSlots() const { return m_first < m_maxSlots ? m_first : m_maxSlots; }

private:
    /// The first boundary F * 2^k at or past the full chunk size: where doubling stops.
    static constexpr uint64_t growthEnd(uint64_t first, uint64_t full) {
        uint64_t end = first;
        while (end < full) end *= 2;
        return end;
    }

    uint64_t m_first;
    uint64_t m_full;
    uint64_t m_growthEnd;
    uint64_t m_maxSlots;
};

} // namespace hpcprof::agent

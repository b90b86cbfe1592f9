// SPDX-License-Identifier: MIT
// Reading SQLite's file format below SQL: a table b-tree's rows in a rowid range, as records.
// Two readers use it: the shard merge, which copies a shard's event records into the trace
// (store/shard_pages), and the analysis, which decodes a trace's event records (issue 22: through
// SQL a row cost the analysis ~450 ns, ~45 % of it). Both read files SQLite wrote and closed,
// and both treat anything unexpected (a damaged page, an overflowing record) as "stop here": the
// caller goes on through SQL, which reports damage its own way. The write side (leaf packing,
// the bulk b-tree load) is the store's (store/table_pages.hpp).
//
//   record   = header-size varint, one serial-type varint per column, then the values
//   leaf     = 8-byte header | cell pointers (2 bytes each) ... free ... cells (from the end)
//   cell     = payload-size varint, rowid varint, record (overflow pages past maxLocalRecord)
//   interior = 12-byte header (right-most child) | (child, largest rowid) cells
//
// File format: https://www.sqlite.org/fileformat2.html (database header, b-tree pages, record
// format).
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::schema::pages {

/// b-tree page types (the first byte of a page's header).
constexpr uint8_t kLeafTable = 0x0D, kInteriorTable = 0x05;

inline uint32_t get16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }
inline uint32_t get32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

/// SQLite's varint: 7 bits a byte, high bit set on all but the last; a 9th byte holds 8 bits.
int getVarintSlow(const uint8_t* p, uint64_t* v);
// One byte: most serial types and header sizes (the per-row path).
inline int getVarint(const uint8_t* p, uint64_t* v) {
    if (p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    return getVarintSlow(p, v);
}
/// A varint that must end before `end` (a damaged page's last cell): its length, 0 when not.
int getVarintInSlow(const uint8_t* p, const uint8_t* end, uint64_t* v);
// Up to four bytes inline: every serial type, size and rowid of a scan is read through it (the
// rowids of a big table take three or four).
inline int getVarintIn(const uint8_t* p, const uint8_t* end, uint64_t* v) {
    if (p < end && p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    if (end - p >= 9) {
        const uint64_t b0 = p[0] & 0x7f;
        if (p[1] < 0x80) {
            *v = b0 << 7 | p[1];
            return 2;
        }
        const uint64_t b1 = p[1] & 0x7f;
        if (p[2] < 0x80) {
            *v = b0 << 14 | b1 << 7 | p[2];
            return 3;
        }
        if (p[3] < 0x80) {
            *v = b0 << 21 | b1 << 14 | uint64_t(p[2] & 0x7f) << 7 | p[3];
            return 4;
        }
    }
    return getVarintInSlow(p, end, v);
}

/// Body lengths of serial types 0-11 (10 and 11 are reserved).
inline constexpr int8_t kFixedSerialLen[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1};
/// Bytes of a record body value of serial type t; -1 for the reserved types.
constexpr int64_t serialLen(uint64_t t) { return t < 12 ? kFixedSerialLen[t] : int64_t((t - 12) / 2); }
inline bool isInteger(uint64_t t) { return (t >= 1 && t <= 6) || t == 8 || t == 9; }
/// The integer of serial type t (isInteger) at p.
inline int64_t readInteger(uint64_t t, const uint8_t* p) {
    // Big-endian, sign from the first byte; one case per width (a byte loop was most of a scan's
    // decoding).
    switch (t) {
    case 1: return int8_t(p[0]);
    case 2: return int16_t(uint16_t(p[0] << 8 | p[1]));
    case 3: return int64_t(int8_t(p[0])) << 16 | int64_t(p[1]) << 8 | p[2];
    case 4: return int32_t(get32(p));
    case 5: return int64_t(int16_t(uint16_t(p[0] << 8 | p[1]))) << 32 | int64_t(get32(p + 2));
    case 6: return int64_t(uint64_t(get32(p)) << 32 | get32(p + 4));
    default: return int64_t(t - 8); // 8 and 9: 0 and 1, no body
    }
}
/// The double of serial type 7 at p (big-endian IEEE 754).
inline double readReal(const uint8_t* p) {
    uint64_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = bits << 8 | p[i];
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

/// The largest record a cell of a page with `usable` bytes holds without overflow pages (with
/// room for the cell's two varints).
inline int64_t maxLocalRecord(uint32_t usable) { return int64_t(usable) - 35; }

/// Done with `bytes` of a shared file mapping at `p`: the whole system pages among them no longer
/// count to this process (the file's pages stay in the page cache). Without it a process's
/// resident size grows by every page of a file it maps and reads once.
void releaseMapped(const uint8_t* p, size_t bytes);

/// A SQLite file read page by page: mapped whole (the shard merge: pages read in place), or read
/// a page at a time into buffers (the analysis: nothing of the file stays resident, and a file
/// cut short under the reader is a short read, not a SIGBUS).
struct PageFile {
    int fd = -1;
    uint32_t pageSize = 0, usable = 0;
    /// Pages of the file (its size), or of the database when the header's count is valid.
    uint32_t pageCount = 0;
    /// Header bytes 18 and 19 (1: rollback journal, 2: WAL; a WAL may hold newer pages).
    uint8_t writeVersion = 0, readVersion = 0;
    const uint8_t* mapped = nullptr;
    uint32_t mappedPages = 0;

    PageFile() = default;
    PageFile(const PageFile&) = delete;
    PageFile& operator=(const PageFile&) = delete;
    ~PageFile();
    /// Opens `path` (open(2) flags) and reads the page size, usable bytes and page count from
    /// its header.
    Status open(const std::filesystem::path& path, int flags);
    /// The whole file mapped read-only (shards: their pages read in place, not copied out).
    Status map();
    /// A page read: its memory no longer counted to this process (the file's pages stay in the
    /// page cache). Without it a merge's resident size grows with the shards it read.
    void release(const uint8_t* page) const;
    /// Page `pgno` of a mapped file, nullptr past its end.
    const uint8_t* at(uint32_t pgno) const {
        return pgno >= 1 && pgno <= mappedPages ? mapped + uint64_t(pgno - 1) * pageSize : nullptr;
    }
    bool read(uint32_t pgno, uint8_t* buf) const;
    /// Page `pgno` for a b-tree walk at `depth` (< kMaxDepth): in place when mapped, otherwise
    /// read into that depth's buffer (valid until the next page of the same depth; at least
    /// kSlack readable bytes follow it, for decoders that load 8 or 16 bytes at a time); nullptr past
    /// the end or for a failed read.
    const uint8_t* page(uint32_t pgno, int depth) const;
    /// Done with a page of page(): its mapping released (mapped files only).
    void done(const uint8_t* page) const {
        if (mapped) release(page);
    }

    /// Pages [first, first + count) read in one piece past the page cache (O_DIRECT), for a
    /// reader of a file that is not cached (the shard merge, on shards that came from other
    /// nodes): no cache page filled and copied out per page. page() serves them from there
    /// until the next preload. false (nothing kept: pages are read one by one) where the file
    /// system refuses O_DIRECT, for a page size under 4 KiB, or for a read that fails or comes
    /// short.
    bool preload(uint32_t first, uint32_t count);

    static constexpr int kMaxDepth = 20;
    static constexpr size_t kSlack = 16;

private:
    /// The span's buffer holds at least `bytes`.
    bool reserveSpan(size_t bytes);

    std::string m_path;
    int m_directFd = -2; ///< -2: not opened yet, -1: refused
    uint8_t* m_span = nullptr;
    size_t m_spanBytes = 0;
    uint32_t m_spanFirst = 0, m_spanCount = 0;

    /// One page (and kSlack) per depth, for unmapped reads: made at the first read at that
    /// depth, so a reader costs the depths its table has (3 or 4), not kMaxDepth pages.
    mutable std::vector<std::vector<uint8_t>> m_buffers;
};

/// The rows [first, last] of a table b-tree in rowid order, to `emit(rowid, record, size)`
/// (false: stop, the record is one the caller does not handle). Records that overflow their
/// page stop the scan too. After page(root, 0): `error` says why it stopped early (empty when
/// it reached `last` or the end), `damaged` whether that was damage (not a record the caller
/// or this scan does not handle), `resumeFrom()` the first rowid not given to `emit`. After
/// damage, do not go on through SQL: SQLite's look-up of a rowid may step over damaged cells
/// that a scan from the start reports.
template <class Emit>
class RangeScan {
public:
    RangeScan(const PageFile& f, int64_t first, int64_t last, Emit& emit)
        : m_f(f), m_first(first), m_last(last), m_next(first), m_emit(emit) {}

    /// false: stop (past `last`, or an error in `error`).
    bool page(uint32_t pgno, int depth) {
        if (depth >= PageFile::kMaxDepth) return fail("b-tree too deep");
        if (++m_visited > m_f.pageCount) return fail("b-tree pages visited twice");
        const uint8_t* p = m_f.page(pgno, depth);
        if (!p) return fail("page past the end of the file");
        const uint8_t* hdr = p + (pgno == 1 ? 100 : 0);
        const uint32_t cells = get16(hdr + 3);
        const uint32_t headerLen = hdr[0] == kLeafTable ? 8 : 12;
        if (uint32_t(hdr - p) + headerLen + 2 * cells > m_f.usable) return fail("damaged b-tree page");
        if (hdr[0] == kLeafTable) {
            const bool more = leaf(p, hdr, cells);
            m_f.done(p);
            return more;
        }
        if (hdr[0] != kInteriorTable) return fail("not a table b-tree page");
        for (uint32_t i = 0; i < cells; ++i) {
            const uint8_t* c = cell(p, hdr, headerLen, i);
            if (!c) return fail("damaged b-tree page");
            uint64_t key = 0;
            if (!getVarintIn(c + 4, p + m_f.usable, &key)) return fail("damaged b-tree page");
            if (int64_t(key) >= m_first && !page(get32(c), depth + 1)) return false;
            if (int64_t(key) >= m_last) return false;
        }
        return page(get32(hdr + 8), depth + 1);
    }

    /// The first rowid of the range not given to `emit`: last + 1 when the scan got through.
    int64_t resumeFrom() const { return error.empty() ? m_last + (m_last < INT64_MAX) : m_next; }

    std::string error;
    bool damaged = false;

private:
    bool fail(const char* why, bool damage = true) {
        error = why;
        damaged = damage;
        return false;
    }

    /// Cell i of a page, nullptr when its offset lies outside the page's cell area (damage).
    const uint8_t* cell(const uint8_t* p, const uint8_t* hdr, uint32_t headerLen, uint32_t i) const {
        const uint32_t off = get16(hdr + headerLen + 2 * i);
        if (off < uint32_t(hdr - p) + headerLen + 2 * i + 2 || off + 4 > m_f.usable) return nullptr;
        return p + off;
    }

    bool leaf(const uint8_t* p, const uint8_t* hdr, uint32_t cells) {
        for (uint32_t i = 0; i < cells; ++i) {
            const uint8_t* c = cell(p, hdr, 8, i);
            if (!c) return fail("damaged b-tree page");
            uint64_t size = 0, rowid = 0;
            const uint8_t* end = p + m_f.usable;
            const int a = getVarintIn(c, end, &size), b = a ? getVarintIn(c + a, end, &rowid) : 0;
            if (!b) return fail("damaged b-tree page");
            c += a + b;
            if (int64_t(rowid) < m_first) continue;
            if (int64_t(rowid) > m_last) return false;
            if (int64_t(rowid) < m_next) return fail("rowids out of order");
            m_next = int64_t(rowid);
            if (size > m_f.usable - 35) return fail("a record overflows its page", false);
            if (c + size > p + m_f.usable) return fail("damaged b-tree page");
            if (!m_emit(int64_t(rowid), c, int64_t(size))) return fail("a record this reader does not handle", false);
            m_next = int64_t(rowid) + 1;
        }
        return true;
    }

    const PageFile& m_f;
    int64_t m_first, m_last, m_next;
    Emit& m_emit;
    uint32_t m_visited = 0;
};

} // namespace hpcprof::schema::pages

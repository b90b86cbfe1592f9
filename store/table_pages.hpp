// SPDX-License-Identifier: MIT
// Table b-trees written below SQL, the way SQLite's file format lays them out: records encoded,
// cells packed into leaf pages in increasing rowid order, the leaves appended past a closed
// trace's page count, and the interior pages built over them once at the end (a bulk b-tree
// load, the way CREATE INDEX builds an index). Two writers use it: the shard merge (shard_pages:
// a shard's records re-encoded) and the conversion (event_pages: decoded events encoded), both
// for rowid tables that receive only growing rowids into an empty table.
//
//   record   = header-size varint, one serial-type varint per column, then the values
//   leaf     = 8-byte header | cell pointers (2 bytes each) ... free ... cells (from the end)
//   cell     = payload-size varint, rowid varint, record (never overflowing here)
//   interior = 12-byte header (right-most child) | (child, largest rowid) cells
//
// File format: https://www.sqlite.org/fileformat2.html (b-tree pages, record format, the lock-
// byte page, the in-header database size).
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::store::pages {

/// b-tree page types (the first byte of a page's header).
constexpr uint8_t kLeafTable = 0x0D, kInteriorTable = 0x05;

inline uint32_t get16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }
inline uint32_t get32(const uint8_t* p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}
inline void put16(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
inline void put32(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}

/// SQLite's varint: 7 bits a byte, high bit set on all but the last; a 9th byte holds 8 bits.
int getVarintSlow(const uint8_t* p, uint64_t* v);
int putVarintSlow(uint8_t* p, uint64_t v);
// One byte: most serial types and header sizes (the per-row path).
inline int getVarint(const uint8_t* p, uint64_t* v) {
    if (p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    return getVarintSlow(p, v);
}
// Up to four bytes inline: serial types, payload sizes and rowids below 2^28.
inline int putVarint(uint8_t* p, uint64_t v) {
    if (v < 0x80) {
        p[0] = uint8_t(v);
        return 1;
    }
    if (v < 0x4000) {
        p[0] = uint8_t(0x80 | (v >> 7)), p[1] = uint8_t(v & 0x7f);
        return 2;
    }
    if (v < 0x200000) {
        p[0] = uint8_t(0x80 | (v >> 14)), p[1] = uint8_t(0x80 | ((v >> 7) & 0x7f)), p[2] = uint8_t(v & 0x7f);
        return 3;
    }
    if (v < 0x10000000) {
        p[0] = uint8_t(0x80 | (v >> 21)), p[1] = uint8_t(0x80 | ((v >> 14) & 0x7f));
        p[2] = uint8_t(0x80 | ((v >> 7) & 0x7f)), p[3] = uint8_t(v & 0x7f);
        return 4;
    }
    return putVarintSlow(p, v);
}
/// A varint that must end before `end` (a damaged page's last cell): its length, 0 when not.
int getVarintInSlow(const uint8_t* p, const uint8_t* end, uint64_t* v);
// One byte inline: the shard merge reads every serial type, size and rowid through it.
inline int getVarintIn(const uint8_t* p, const uint8_t* end, uint64_t* v) {
    if (p < end && p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    return getVarintInSlow(p, end, v);
}
int varintLen(uint64_t v);

/// Bytes of a record body value of serial type t; -1 for the reserved types.
inline int64_t serialLen(uint64_t t) {
    static constexpr int8_t kFixed[12] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, -1, -1};
    return t < 12 ? kFixed[t] : int64_t((t - 12) / 2);
}
inline bool isInteger(uint64_t t) { return (t >= 1 && t <= 6) || t == 8 || t == 9; }
/// The integer of serial type t (isInteger) at p.
inline int64_t readInteger(uint64_t t, const uint8_t* p) {
    if (t == 8 || t == 9) return int64_t(t - 8); // 0 and 1 have no body
    const int64_t n = serialLen(t);
    int64_t v = int8_t(p[0]); // sign from the first byte
    for (int64_t i = 1; i < n; ++i) v = int64_t(uint64_t(v) << 8 | p[i]);
    return v;
}

/// The serial type SQLite writes for an integer (schema format 4: 0 and 1 take no body).
inline uint64_t integerType(int64_t v) {
    if (v == 0 || v == 1) return 8 + uint64_t(v);
    const uint64_t u = v < 0 ? ~uint64_t(v) : uint64_t(v);
    if (u <= 127) return 1;
    if (u <= 32767) return 2;
    if (u <= 8388607) return 3;
    if (u <= 2147483647) return 4;
    if (u <= 0x7fffffffffffULL) return 5;
    return 6;
}
inline void writeInteger(uint8_t* p, uint64_t t, int64_t v) {
    for (int64_t i = serialLen(t) - 1; i >= 0; --i, v >>= 8) p[i] = uint8_t(v);
}

/// The record of `n` (< 127) integer-or-NULL columns (nullopt: NULL, as the INTEGER PRIMARY KEY
/// column is in a rowid table's record) into `out`: its length. `out` holds 1 + 9 n + 8 bytes
/// (values are stored 8 bytes at a time). Bytes equal to what SQLite writes for an INSERT of the
/// same values into INTEGER columns.
int64_t encodeIntegerRecord(const std::optional<int64_t>* columns, size_t n, uint8_t* out);

/// The largest record a cell of a page with `usable` bytes holds without overflow pages (with
/// room for the cell's two varints).
inline int64_t maxLocalRecord(uint32_t usable) { return int64_t(usable) - 35; }

/// A SQLite file read page by page: a shard mapped whole, or the trace an appender writes to.
struct PageFile {
    int fd = -1;
    uint32_t pageSize = 0, usable = 0;
    const uint8_t* mapped = nullptr;
    uint32_t mappedPages = 0;

    PageFile() = default;
    PageFile(const PageFile&) = delete;
    PageFile& operator=(const PageFile&) = delete;
    ~PageFile();
    /// Opens `path` (open(2) flags) and reads the page size and usable bytes from its header.
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
};

/// Packs (rowid, record) cells into table-leaf pages, rowids increasing; each full leaf goes to
/// the sink with its largest rowid. Leaf pages hold no page numbers: where a leaf ends up in a
/// file is the sink's business.
class LeafPacker {
public:
    using Sink = std::function<Status(const uint8_t* page, int64_t lastRowid)>;
    LeafPacker(uint32_t pageSize, uint32_t usable, Sink sink);

    /// A record of at most maxLocalRecord(usable) bytes, its rowid above the last one's.
    Status add(int64_t rowid, const uint8_t* record, int64_t size);
    /// The leaf being filled, if it holds any cell, to the sink.
    Status flush();

    int64_t rows() const { return m_rows; }
    int64_t lastRowid() const { return m_lastRowid; }

private:
    void start();
    std::vector<uint8_t> m_leaf;
    uint32_t m_usable = 0, m_cells = 0, m_content = 0;
    int64_t m_lastRowid = INT64_MIN, m_rows = 0;
    Sink m_sink;
};

/// The file side: leaf pages appended to one empty rowid table of a closed trace file, past the
/// header's page count, then the table's interior pages, its root and the header (`finish`).
/// Nothing else of the file is touched but its header's page count and change counter. Until
/// `finish` the trace is unchanged for SQLite (the new pages lie past the page count).
class TreeAppender {
public:
    /// `trace`: a closed SQLite file without auto-vacuum, schema format 4, whose header gives its
    /// page count; `rootPage`: the table's root, an empty leaf. `pendingByte`: SQLite's lock-byte
    /// offset, whose page no b-tree uses (tests move it, as SQLITE_TESTCTRL_PENDING_BYTE does).
    static Result<TreeAppender> open(const std::filesystem::path& trace, uint32_t rootPage,
                                     uint64_t pendingByte = 0x40000000);
    TreeAppender(TreeAppender&&) noexcept;
    TreeAppender& operator=(TreeAppender&&) noexcept;
    ~TreeAppender();

    uint32_t pageSize() const;
    uint32_t usable() const;
    /// A full leaf page (LeafPacker's), its largest rowid above the previous leaf's.
    Status addLeaf(const uint8_t* page, int64_t lastRowid);
    /// The interior pages, the root, and the header: the leaves become the table's rows.
    Status finish();
    /// Truncates the file back to what it was.
    void abandon();

    struct State;

private:
    explicit TreeAppender(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

} // namespace hpcprof::store::pages

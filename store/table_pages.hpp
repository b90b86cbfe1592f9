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
// The reading side (varints, serial types, PageFile, RangeScan) is the schema library's
// (hpcprof/schema/sqlite_pages.hpp): the analysis reads event records with it too.
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
#include <type_traits>
#include <vector>

#include "hpcprof/schema/sqlite_pages.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::store::pages {

// The reading side: varints, serial types, PageFile, RangeScan.
using namespace hpcprof::schema::pages;

inline void put16(uint8_t* p, uint32_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
inline void put32(uint8_t* p, uint32_t v) {
    p[0] = uint8_t(v >> 24), p[1] = uint8_t(v >> 16), p[2] = uint8_t(v >> 8), p[3] = uint8_t(v);
}

/// SQLite's varint written (the reading side is schema/sqlite_pages.hpp).
int putVarintSlow(uint8_t* p, uint64_t v);
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
    if (v < 0x800000000) { // the rowids of a trace past 268 M events
        p[0] = uint8_t(0x80 | (v >> 28)), p[1] = uint8_t(0x80 | ((v >> 21) & 0x7f));
        p[2] = uint8_t(0x80 | ((v >> 14) & 0x7f)), p[3] = uint8_t(0x80 | ((v >> 7) & 0x7f));
        p[4] = uint8_t(v & 0x7f);
        return 5;
    }
    return putVarintSlow(p, v);
}

/// The N bytes at `from` to `to` as one fixed-size move (no call): the per-row path's copies.
template <size_t N>
inline void moveBytes(uint8_t* to, const uint8_t* from) {
    uint8_t tmp[N];
    std::memcpy(tmp, from, N);
    std::memcpy(to, tmp, N);
}

/// `n` bytes from `from` to `to`, exactly (no byte past `to + n` written), for the short copies
/// of the per-row path: overlapping fixed-size moves instead of a call to memcpy.
inline void copyShort(uint8_t* to, const uint8_t* from, size_t n) {
    if (n >= 16 && n <= 32) {
        moveBytes<16>(to, from);
        moveBytes<16>(to + n - 16, from + n - 16);
    } else if (n > 32 && n <= 64) {
        moveBytes<32>(to, from);
        moveBytes<32>(to + n - 32, from + n - 32);
    } else if (n >= 8 && n < 16) {
        moveBytes<8>(to, from);
        moveBytes<8>(to + n - 8, from + n - 8);
    } else {
        std::memcpy(to, from, n);
    }
}
int varintLen(uint64_t v);

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
/// Integer `v` of serial type `t` at `p`, big-endian in its serialLen(t) bytes, stored as 8
/// bytes: the 8 bytes at `p` must be writable (the next value, or the buffer's room past the
/// record, overwrites the rest).
inline void storeInteger(uint8_t* p, uint64_t t, int64_t v) {
    const int64_t len = serialLen(t);
    if (len == 0) return; // 0 and 1 (types 8 and 9), and NULL: no bytes
    const uint64_t be = __builtin_bswap64(uint64_t(v) << (8 * (8 - len)));
    std::memcpy(p, &be, 8);
}

/// The record of `n` (< 127) integer-or-NULL columns (nullopt: NULL, as the INTEGER PRIMARY KEY
/// column is in a rowid table's record) into `out`: its length. `out` holds 1 + 9 n + 8 bytes
/// (values are stored 8 bytes at a time). Bytes equal to what SQLite writes for an INSERT of the
/// same values into INTEGER columns.
int64_t encodeIntegerRecord(const std::optional<int64_t>* columns, size_t n, uint8_t* out);

/// Packs (rowid, record) cells into table-leaf pages, rowids increasing; each full leaf goes to
/// the sink with its largest rowid. Leaf pages hold no page numbers: where a leaf ends up in a
/// file is the sink's business.
class LeafPacker {
public:
    using Sink = std::function<Status(const uint8_t* page, int64_t lastRowid)>;
    /// Where the next leaf is packed (pageSize bytes, any content: every byte is written).
    using NextPage = std::function<uint8_t*()>;
    /// Leaves packed in the packer's own page (copied out by the sink), or where `next` says (the
    /// sink then finds them in place: no page copy).
    LeafPacker(uint32_t pageSize, uint32_t usable, Sink sink, NextPage next = {});

    /// A record of at most maxLocalRecord(usable) bytes, its rowid above the last one's.
    Status add(int64_t rowid, const uint8_t* record, int64_t size);
    /// The leaf being filled, if it holds any cell, to the sink.
    Status flush();

    int64_t rows() const { return m_rows; }
    int64_t lastRowid() const { return m_lastRowid; }

private:
    std::vector<uint8_t> m_leaf; ///< the page packed into without `next`
    uint8_t* m_page = nullptr;   ///< the leaf being filled; nullptr until its first cell
    uint32_t m_pageSize = 0, m_usable = 0, m_cells = 0, m_content = 0;
    int64_t m_lastRowid = INT64_MIN, m_rows = 0;
    Sink m_sink;
    NextPage m_next;
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
    /// `n` full leaves laid end to end in `leaves`, each with its largest rowid: addLeaf's, with
    /// one write per stretch of consecutive pages (past the page cache where the stretch is big
    /// and aligned: direct_io.hpp).
    Status addLeaves(const uint8_t* leaves, const int64_t* lastRowids, size_t n);
    /// The interior pages, the root, and the header: the leaves become the table's rows.
    Status finish();
    /// Truncates the file back to what it was.
    void abandon();
    /// Bytes of leaves written past the page cache (direct_io.hpp).
    uint64_t directBytes() const;

    struct State;

private:
    explicit TreeAppender(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

} // namespace hpcprof::store::pages

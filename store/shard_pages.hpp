// SPDX-License-Identifier: MIT
// The shard merge's copy of event rows below SQL (issue 22: merge >= 20 M events/s). An
// INSERT ... SELECT costs SQLite about 500 ns a row here (each record decoded, rebuilt and
// inserted through the b-tree: ~2 M rows per CPU-second), even with SQLite's transfer
// optimisation (records copied undecoded, ~4.8 M rows/s at best) far from the target. The
// event rows of a merged trace are the shards' rows with a few integer columns changed (ids
// offset or mapped, times shifted) and rowids that only grow, so they are written here as
// SQLite's file format lays them out: the shard's table b-tree is walked leaf by leaf, each
// record's changed columns re-encoded, the cells packed into fresh leaf pages appended to the
// trace file, and the interior pages built over them once at the end (a bulk b-tree load, the
// way CREATE INDEX builds an index). The packing, the append and the interior pages are
// table_pages.hpp's, which the conversion's event rows use too (event_pages.hpp). What SQLite would refuse to read back is never written:
// any row this code does not handle (an overflowing record, a non-integer in a changed column)
// is an error, and the caller copies with SQL instead (shard_merge.cpp).
//
// File format: https://www.sqlite.org/fileformat2.html (b-tree pages, record format, the lock-
// byte page, the in-header database size).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::store {

/// What happens to one column of a record: copied as it is, an integer added, or an id mapped
/// through `map` (map[id], NULL where the map has none, as the SQL path's hpcprof_map gives).
struct ColumnOp {
    enum class Kind { Copy, Add, Map } kind = Kind::Copy;
    int64_t add = 0;
    const std::vector<int64_t>* map = nullptr;
};

/// Appends the rows of shard tables to one empty rowid table of a closed trace file, in
/// increasing rowid order, then makes the table's b-tree over them (`finish`). Nothing else of the
/// file is touched but its header's page count and change counter. Until `finish` the trace is
/// unchanged for SQLite (the new pages lie past the page count the header gives).
class TableAppender {
public:
    /// `trace`: a closed SQLite file without auto-vacuum; `rootPage`: the table's root, an empty
    /// leaf. `pendingByte`: SQLite's lock-byte offset, whose page no b-tree uses (tests move it,
    /// as SQLITE_TESTCTRL_PENDING_BYTE does, to cross it with a small file). `windowRows`: rows
    /// one thread rewrites and packs on its own (0: the default; tests make many small ones).
    static Result<TableAppender> open(const std::filesystem::path& trace, uint32_t rootPage,
                                      uint64_t pendingByte = 0x40000000, int64_t windowRows = 0);
    TableAppender(TableAppender&&) noexcept;
    TableAppender& operator=(TableAppender&&) noexcept;
    ~TableAppender();

    /// Rows [first, last] of the rowid table rooted at `shardRoot` in `shard`, with rowid + offset
    /// and their columns through `ops` (ops[i] for column i; the INTEGER PRIMARY KEY column, NULL
    /// in the record, is ops' Copy). `threads` rewrite and pack windows of rows side by side;
    /// the file is the same whatever their number. `pastCache`: each window's leaves are read in
    /// one piece past the page cache (readsPastCache, direct_io.hpp), else page by page through it.
    Status append(const std::filesystem::path& shard, uint32_t shardRoot, int64_t first, int64_t last,
                  int64_t rowidOffset, const std::vector<ColumnOp>& ops, unsigned threads = 1,
                  bool pastCache = false);

    /// The interior pages, the root, and the header: the rows become the table's.
    Status finish();

    /// Truncates the file back to what it was (the caller copies with SQL instead).
    void abandon();

    int64_t rows() const;
    /// Bytes of leaves written past the page cache (direct_io.hpp).
    uint64_t directBytes() const;
    /// Pages of shards' leaves read past the page cache, window by window (direct_io.hpp).
    uint64_t preloadedPages() const;

    struct State;

private:
    explicit TableAppender(std::unique_ptr<State> state);
    std::unique_ptr<State> m_state;
};

} // namespace hpcprof::store

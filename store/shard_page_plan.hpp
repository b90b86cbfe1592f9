// SPDX-License-Identifier: MIT
// Which of the shard merge's row copies go below SQL (shard_pages.hpp), planned while the merge
// runs its SQL and carried out once the trace is closed: the event table and every table keyed
// by event whose key is its rowid (event_detail, event_unfinished, ...), as long as the trace's
// table has no index to maintain and each shard's table has the trace's columns in the trace's
// order (its records are then the trace's rows but for the columns the merge changes). Any other
// table, or one that fails these checks, is copied with SQL as before.
#pragma once

#include <sqlite3.h>

#include <array>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"
#include "shard_copy.hpp"
#include "shard_pages.hpp"

namespace hpcprof::store {

class PagePlan {
public:
    /// A shard's interned id maps (old id -> the trace's, -1 none); nullptr: ids unchanged.
    using Maps = std::array<const std::vector<int64_t>*, 3>; // strings, objects, communicators

    /// What one column of a planned table becomes in a run (the SQL copy's rule, as an op).
    using OpRule = std::function<ColumnOp(const std::string& column)>;

    /// Takes `candidates` (event first) whose trace table qualifies.
    void chooseTables(sqlite3* db, const std::vector<std::string>& candidates);

    /// Shard `shard`, attached as `src`: its tables' roots, and copies of its maps.
    void addShard(sqlite3* db, ColumnCatalog& columns, const std::string& src, const Maps& maps);

    /// Whether `table`'s rows are written below SQL.
    bool covers(const std::string& table) const { return m_tables.count(table) != 0; }

    /// Shard `shard`'s maps as addShard kept them.
    const Maps& maps(size_t shard) const { return m_maps[shard]; }

    /// Rows [first, last] (rowids) of `table` of shard `shard` (attached as `src`) at rowid +
    /// offset, each column through `rule`.
    Status addRun(ColumnCatalog& columns, const std::string& src, const std::string& table, size_t shard,
                  int64_t first, int64_t last, int64_t offset, const OpRule& rule);

    /// The trace's roots of the planned tables (before it is closed).
    void readRoots(sqlite3* db);

    bool empty() const { return m_tables.empty(); }

    /// Writes the planned rows into the closed trace `path`, table by table, with `threads`
    /// rewriting and packing rows side by side; `rows`: how many each table got.
    Status write(const std::string& path, const std::vector<std::filesystem::path>& shardFiles,
                 std::map<std::string, int64_t>& rows, unsigned threads) const;

private:
    struct Run {
        size_t shard = 0;
        int64_t first = 0, last = -1, offset = 0;
        std::vector<ColumnOp> ops;
    };
    struct Table {
        uint32_t root = 0;               ///< in the trace
        std::vector<uint32_t> shardRoots; ///< per shard
        std::vector<Run> runs;
    };

    std::map<std::string, Table> m_tables;
    std::vector<std::string> m_order;      ///< the planned tables, event first
    std::deque<std::vector<int64_t>> m_mapCopies;
    std::vector<Maps> m_maps;
};

} // namespace hpcprof::store

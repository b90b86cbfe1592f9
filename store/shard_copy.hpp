// SPDX-License-Identifier: MIT
// The SQL the shard merge copies rows with, built from the schema itself (the columns both the
// trace and the attached shard have), so that a column added to a table is carried along without
// a change here. Columns whose values depend on where the shard lands in the trace follow naming
// rules of the schema (docs/trace-schema.md):
//   ts, *_ts                 times: shifted by the shard's placement;
//   event_id, *_event_id     event references: offset like the event ids;
// and per table the ids the merge renumbers (ColumnRule). Every other column is copied as it is.
#pragma once

#include <sqlite3.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::store {

/// For one column of a shard's row (alias `e`): the SQL expression of its value in the trace,
/// nullopt to copy it as it is, or "" to leave it out (the trace numbers it).
using ColumnRule = std::function<std::optional<std::string>(const std::string& column)>;

/// The offsets and shift of one copy: ids of the shard + offset = ids of the trace.
struct CopyOffsets {
    int64_t event = 0, track = 0, thread = 0, counterTrack = 0;
    int64_t shift = 0; ///< ns added to every time
};

/// The generic rules: times shifted, event references offset; nullopt for other columns.
std::optional<std::string> placedColumn(const std::string& column, const CopyOffsets& o);

/// Column lists of the tables of main and of attached shards, read once per (schema, table).
class ColumnCatalog {
public:
    explicit ColumnCatalog(sqlite3* db) : m_db(db) {}

    /// The columns of `table` that main and `src` both have, in main's order.
    Result<std::vector<std::string>> shared(const std::string& src, const std::string& table);

    /// The tables of main other than `except` with an event_id column (event_detail, event_arg,
    /// ...): the rows that hang off events, copied with the events' id range.
    std::vector<std::string> eventKeyedTables();

    /// "INSERT INTO main.T(cols) SELECT exprs FROM src.T e<joins>": every shared column, through
    /// `rule`.
    Result<std::string> insertSelect(const std::string& src, const std::string& table,
                                     const ColumnRule& rule, const std::string& joins = {});

    /// Whether `src`'s `table` has main's columns, in main's order (its records then read as
    /// main's rows).
    bool sameColumns(const std::string& src, const std::string& table) {
        return columns("main", table) == columns(src, table);
    }

    /// Forgets what was read of `schema` (another shard attached under its name).
    void forget(const std::string& schema);

private:
    std::vector<std::string> columns(const std::string& schema, const std::string& table);

    sqlite3* m_db;
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> m_cache;
};

/// The shards' interned id maps (old id -> the trace's), looked up during the copy by the SQL
/// function hpcprof_map(MAP, ID) (NULL for NULL or an id the map lacks, as a LEFT JOIN gives):
/// one array look-up per row instead of a join on a temp table, which cost the event copy half
/// again its time.
class IdMaps {
public:
    explicit IdMaps(sqlite3* db);
    ~IdMaps();
    IdMaps(const IdMaps&) = delete;
    IdMaps& operator=(const IdMaps&) = delete;

    /// Loads the map `SELECT old, new FROM <table>`; its number for hpcprof_map, or -1 when the
    /// map changes no id (nothing to look up).
    Result<int> load(const std::string& table);

    /// Map `number` (from load): the trace's id at the shard's id, -1 where the map has none.
    const std::vector<int64_t>& map(int number) const { return m_maps[size_t(number)]; }

private:
    static void lookup(sqlite3_context* c, int argc, sqlite3_value** argv);

    sqlite3* m_db;
    std::vector<std::vector<int64_t>> m_maps;
};

} // namespace hpcprof::store

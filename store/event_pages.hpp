// SPDX-License-Identifier: MIT
// The conversion's event rows below SQL (issues 22 and 25). Through INSERTs SQLite took ~60 % of
// the conversion (~1,700 instructions a row: the statement's VDBE program, the b-tree insert,
// the page cache). A conversion's `event` and `event_detail` rows have only integer or NULL
// columns and rowids that only grow (the writer's own counter), the same shape the shard merge
// copies below SQL (shard_pages.hpp), so they are written with the same page machinery
// (table_pages.hpp): each row encoded as SQLite's record, packed into leaf pages as it comes,
// the leaves spilled to an unlinked file beside the trace (they hold no page numbers, and the
// trace's own pages are SQLite's until it closes), then, once the trace is committed and
// closed, appended past its page count with the interior pages built over them.
//
// The rows are the ones the SQL path writes (same rowids, values and types; tests compare both
// on real captures). A table whose pages cannot be appended (a trace file this code does not
// handle) gets its rows through SQL instead, decoded back from the spilled leaves (`replay`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "hpcprof/store/trace_writer.hpp"
#include "table_pages.hpp"

namespace hpcprof::store {

class EventPages {
public:
    /// The tables written below SQL, in the order they are appended.
    enum Table { Event = 0, Detail = 1, TableCount_ = 2 };
    static constexpr const char* kTableNames[TableCount_] = {"event", "event_detail"};
    /// Columns of each table's record (DDL order; the first, the rowid's alias, is NULL).
    static constexpr size_t kColumns[TableCount_] = {15, 4};

    /// Leaves of `pageSize` bytes (`usable` of them for cells) spilled to an unlinked file in
    /// `dir` (the trace's folder: the same file system as the trace).
    static Result<std::unique_ptr<EventPages>> create(const std::filesystem::path& dir, uint32_t pageSize,
                                                      uint32_t usable);
    ~EventPages();

    /// Event `id`'s row (ids increasing), its offset column `offset`.
    Status addEvent(int64_t id, const EventRow& row, const std::optional<int64_t>& offset);
    /// Event `id`'s event_detail row.
    Status addDetail(int64_t id, const EventDetail& d);
    /// The leaves being filled, to the spill file.
    Status flush();

    /// Each table's leaves appended to the closed trace (`roots`: its tables' root pages, empty
    /// leaves). `failed[t]`: table t was left unchanged and needs `replay` through SQL.
    Status write(const std::filesystem::path& trace, const uint32_t (&roots)[TableCount_],
                 bool (&failed)[TableCount_], std::string& why) const;

    /// The rows of table `t`, decoded from the spilled leaves: (rowid, columns).
    using Row = std::function<Status(int64_t rowid, const std::optional<int64_t>* columns, size_t n)>;
    Status replay(Table t, const Row& row) const;

    int64_t rows(Table t) const;

private:
    EventPages(int fd, uint32_t pageSize, uint32_t usable);
    Status spill(Table t, const uint8_t* page, int64_t lastRowid);
    Result<const uint8_t*> mapSpill() const;
    Status writeTable(const std::filesystem::path& trace, uint32_t root, Table t, const uint8_t* spilled) const;

    int m_fd = -1;
    uint32_t m_pageSize = 0, m_usable = 0;
    uint32_t m_spilled = 0; ///< pages in the spill file
    /// Per table: (page index in the spill file, largest rowid) of each leaf.
    std::vector<std::pair<uint32_t, int64_t>> m_leaves[TableCount_];
    std::unique_ptr<pages::LeafPacker> m_packers[TableCount_];
    std::vector<uint8_t> m_record;
    mutable const uint8_t* m_map = nullptr;
    mutable size_t m_mapBytes = 0;
};

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
// A rowid table of a trace read below SQL (issue 22): its b-tree walked leaf by leaf
// (schema/sqlite_pages.hpp) over a rowid range. What the event scan (event_page_reader.hpp) and
// the event-keyed tables' readers share: when the file may be read so (the same pages SQL would
// read), the read lock held meanwhile, how far a scan got, and the error for damage. Where SQL
// must read the table, there is no reader: a file SQLite may hold newer pages of elsewhere (a
// WAL), a table adapted through a temporary view (an older trace), a table whose first column
// is not the rowid's alias, or one without a column asked for.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/schema/sqlite.hpp"
#include "hpcprof/schema/sqlite_pages.hpp"
#include "hpcprof/status.hpp"

namespace hpcprof::analyzer::detail {

/// How far a scan got: the first rowid it did not read (last + 1 when it got through the range;
/// the caller reads the rest through SQL), or the damage it met (an error: not to be read on
/// through SQL, whose look-ups may step over damaged cells).
struct PageScanStop {
    int64_t resumeFrom = 0;
    Status damage;
};

/// A real as sqlite3_column_int64 converts it (clamped to the int64 range, truncated); false for
/// NaN, which SQLite never stores.
bool realToInteger(double r, int64_t& v);
/// The value of serial type t (not NULL) at p as sqlite3_column_int64 gives it: an integer, or
/// a real converted; false for text or a blob (SQL's conversion: SQL reads those).
bool integerValue(uint64_t t, const uint8_t* p, int64_t& v);

class RowidTablePages {
public:
    /// `table` of `trace`, its first column `rowidColumn` (the rowid's alias), and the record
    /// position of each of `names` in `columns` (1-63); null where SQL must read it.
    static std::unique_ptr<RowidTablePages> open(const Trace& trace, const std::string& table,
                                                 const std::string& rowidColumn,
                                                 const std::vector<std::string>& names, std::vector<uint8_t>& columns);

    /// Rows [first, last] in rowid order, each record to emit(rowid, record, size), which
    /// returns false for a record SQL must read.
    template <class Emit>
    PageScanStop scan(int64_t first, int64_t last, Emit& emit) const {
        schema::pages::RangeScan<Emit> s(m_file, first, last, emit);
        s.page(m_root, 0);
        return {s.resumeFrom(), s.damaged ? damaged(s.error, s.resumeFrom()) : Status()};
    }

private:
    RowidTablePages() = default;
    /// The file, the table rooted at page `root`: false where SQL must read it.
    bool openFile(const std::string& file, int64_t root);
    /// The error for damage met by a scan at or after rowid `at`.
    Status damaged(const std::string& why, int64_t at) const;

    schema::pages::PageFile m_file;
    uint32_t m_root = 0;
    std::string m_path, m_table; ///< for messages
    schema::Statement m_lock;    ///< stepped, not reset: the read lock
};

/// Some columns of a rowid table (an event-keyed one: event_detail, ...) read below SQL, each
/// value as SQL gives it: NULL as null, integers, reals truncated as sqlite3_column_int64
/// converts them. A record with text or a blob in one of them (or one SQL must read: see
/// RangeScan) is where the scan stops and SQL goes on.
class IntegerColumnPages {
public:
    static constexpr size_t kMaxColumns = 8;
    /// Null where SQL must read the table (RowidTablePages::open), or for more than
    /// kMaxColumns names.
    static std::unique_ptr<IntegerColumnPages> open(const Trace& trace, const std::string& table,
                                                    const std::string& rowidColumn,
                                                    const std::vector<std::string>& names);

    /// Rows [first, last] in rowid order: fn(rowid, values, nulls), one of each per name.
    template <class Fn>
    PageScanStop scan(int64_t first, int64_t last, Fn&& fn) const {
        auto emit = [&](int64_t rowid, const uint8_t* record, int64_t size) {
            int64_t values[kMaxColumns];
            bool nulls[kMaxColumns];
            if (!decode(record, size, values, nulls)) return false;
            fn(rowid, values, nulls);
            return true;
        };
        return m_table->scan(first, last, emit);
    }

private:
    IntegerColumnPages() = default;
    /// The named columns' values of one record; false for one SQL must read.
    bool decode(const uint8_t* record, int64_t size, int64_t* values, bool* nulls) const;

    std::unique_ptr<RowidTablePages> m_table;
    std::vector<uint8_t> m_columns; ///< record position of each name
    size_t m_last = 0;              ///< the largest position
};

} // namespace hpcprof::analyzer::detail

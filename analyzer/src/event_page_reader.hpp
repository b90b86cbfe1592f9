// SPDX-License-Identifier: MIT
// The analysis's event scan below SQL (issue 22: 1 billion events analysed in minutes). Through
// SQL each event cost the per-rank pass ~450 ns of SQLite (the statement's program, the cursor,
// one library call per column): about half the analysis. The events of a track are one rowid
// range of the `event` table, so they are read here the way the shard merge reads a shard:
// the table's b-tree walked leaf by leaf (schema/sqlite_pages.hpp), each record's columns
// decoded in place, with the values SQL gives the same columns (NULL read as 0, or as -1 and 1
// where the SQL scan maps them so, reals truncated as SQLite converts them).
//
// Only what it is sure to read as SQL would is read here. A file SQLite may hold newer pages of
// elsewhere (a WAL), an older trace adapted through views, or a table of another layout gets no
// reader at all; a record it does not handle (text, an overflowing record, a short record) or a
// damaged page ends the range early, and the caller reads the rest through SQL, which reports
// damage its own way. While it reads, a stepped statement holds the connection's read lock, so
// no writer can change the file under it.
#pragma once

#include <array>
#include <bitset>
#include <cstdint>
#include <memory>
#include <utility>

#include "hpcprof/schema/sqlite_pages.hpp"
#include "rowid_table_pages.hpp"
#include "event_record.hpp"
#include "hpcprof/analyzer/trace.hpp"
#include "hpcprof/schema/sqlite.hpp"

namespace hpcprof::analyzer::detail {

class EventPageReader {
public:
    /// The reader of `trace`'s event table, or null when its rows must be read through SQL.
    static std::unique_ptr<EventPageReader> open(const Trace& trace);

    using Stop = PageScanStop;

    /// The events of track `trackId` among ids [first, last], each decoded into `e` and given to
    /// fn(e), in id order.
    template <class Fn>
    Stop scan(int64_t first, int64_t last, int64_t trackId, EventRecord& e, Fn&& fn) const {
        return scan(first, last, trackId, nullptr, e, std::forward<Fn>(fn));
    }

    /// Categories by id (0-255).
    using Categories = std::bitset<256>;

    /// scan's, but only the events of `categories` (all when null) go to fn; the others are
    /// passed over, most of them without being decoded.
    template <class Fn>
    Stop scan(int64_t first, int64_t last, int64_t trackId, const Categories* categories, EventRecord& e,
              Fn&& fn) const {
        auto emit = [&](int64_t rowid, const uint8_t* record, int64_t size) {
            if (categories && !mayBeOf(record, size, *categories)) return true;
            bool ofTrack = false;
            if (!decode(rowid, record, size, trackId, e, ofTrack)) return false;
            if (ofTrack && (!categories || (e.categoryId >= 0 && e.categoryId < 256 && categories->test(size_t(e.categoryId)))))
                fn(e);
            return true;
        };
        return m_table->scan(first, last, emit);
    }

    /// Track `t`'s id range read below SQL as far as `pages` (may be null) gets, each event to
    /// fn(e): the id SQL goes on from (past the range's end when nothing is left; the range's
    /// first id, or 0 for a track without one, when nothing was read here), or the damage met.
    /// With `categories` (may be null), only their events go to fn.
    template <class Fn>
    static Result<int64_t> readAsFarAsItGets(const EventPageReader* pages, const TrackInfo& t, EventRecord& e,
                                             Fn&& fn, const Categories* categories = nullptr) {
        if (!t.firstEventId || !t.lastEventId) return int64_t(0);
        if (!pages) return *t.firstEventId;
        Stop stop = pages->scan(*t.firstEventId, *t.lastEventId, t.id, categories, e, std::forward<Fn>(fn));
        if (!stop.damage.ok()) return stop.damage;
        return stop.resumeFrom;
    }

    /// The columns the scan reads, in EventRecord's terms.
    enum Field { TrackId, Ts, Dur, CategoryId, NameId, Depth, Bytes, ObjectId, Peer, CommunicatorId, Seq, Count,
                 CorrelationId, FieldCount };

private:
    EventPageReader() = default;
    /// One record into `e` (and whether it is of `trackId`); false for a record SQL must read.
    bool decode(int64_t rowid, const uint8_t* record, int64_t size, int64_t trackId, EventRecord& e,
                bool& ofTrack) const;
    /// False only for a record whose category is an integer not in `categories` (the header
    /// and the values before it read as integerColumns would); true for any other.
    bool mayBeOf(const uint8_t* record, int64_t size, const Categories& categories) const;
    /// The fields' values of a record holding only integers and NULLs where they are (the
    /// usual record); false for any other.
    bool integerColumns(const uint8_t* record, int64_t size, int64_t* value, bool* null) const;
    /// The same for records with reals and short text or blobs (false where a field is one).
    bool anyColumns(const uint8_t* record, int64_t size, int64_t* value, bool* null) const;

    static constexpr size_t kMaxColumns = 64;
    std::unique_ptr<RowidTablePages> m_table;
    std::array<uint8_t, FieldCount> m_column{}; ///< the record column of each field
    std::array<bool, kMaxColumns> m_read{};     ///< columns whose values are decoded
    size_t m_columns = 0;                       ///< record columns the fields need (largest + 1)
};

} // namespace hpcprof::analyzer::detail

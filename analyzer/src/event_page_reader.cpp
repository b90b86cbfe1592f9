// SPDX-License-Identifier: MIT
#include "event_page_reader.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace hpcprof::analyzer::detail {

namespace {

using namespace schema::pages;

constexpr const char* kFieldNames[EventPageReader::FieldCount] = {
    "track_id", "ts", "dur", "category_id", "name_id", "depth", "bytes", "object_id", "peer",
    "communicator_id", "seq", "count", "correlation_id"};

} // namespace

std::unique_ptr<EventPageReader> EventPageReader::open(const Trace& trace) {
    std::unique_ptr<EventPageReader> r(new EventPageReader);
    std::vector<uint8_t> columns;
    r->m_table = RowidTablePages::open(trace, "event", "id", {std::begin(kFieldNames), std::end(kFieldNames)}, columns);
    if (!r->m_table) return nullptr;
    for (size_t f = 0; f < columns.size(); ++f) {
        const uint8_t c = columns[f];
        r->m_column[f] = c;
        r->m_read[c] = true;
        r->m_columns = std::max<size_t>(r->m_columns, size_t(c) + 1);
    }
    return r;
}

bool EventPageReader::integerColumns(const uint8_t* rec, int64_t size, int64_t* value, bool* null) const {
    // Bytes of each serial type below 16; 7 (a real) and 10 and up are sent to the other path.
    static constexpr uint8_t kLen[16] = {0, 1, 2, 3, 4, 6, 8, 8, 0, 0, 0, 0, 0, 0, 0, 0};
    int64_t offset[kMaxColumns];
    int64_t at = rec[0];
    uint32_t other = 0;
    for (size_t c = 0; c < m_columns; ++c) {
        const uint8_t t = rec[1 + c];
        other |= uint32_t(t >= 10) | uint32_t(t == 7);
        offset[c] = at;
        at += kLen[t & 15];
    }
    if (other || at > size) return false;
    // Each value loaded as 8 big-endian bytes and shifted down to its width, sign kept (the
    // page buffer has 8 bytes to spare past its end): no branch on the serial type, which
    // changes from row to row.
    for (const uint8_t c : m_column) {
        const uint8_t t = rec[1 + c];
        uint64_t raw;
        std::memcpy(&raw, rec + offset[c], sizeof raw);
        const int len = kLen[t];
        const int64_t v = int64_t(__builtin_bswap64(raw));
        value[c] = len ? v >> (64 - 8 * len) : int64_t(t == 9);
        null[c] = t == 0;
    }
    return true;
}

bool EventPageReader::mayBeOf(const uint8_t* rec, int64_t size, const Categories& categories) const {
    const int64_t headerSize = rec[0];
    const size_t c = m_column[CategoryId];
    if (headerSize >= 0x80 || headerSize > size || size_t(headerSize - 1) < m_columns) return true;
    int64_t at = headerSize;
    for (size_t i = 0; i < c; ++i) {
        const uint8_t t = rec[1 + i];
        const int64_t len = serialLen(t);
        if (t >= 0x80 || len < 0) return true;
        at += len;
    }
    const uint8_t t = rec[1 + c];
    if (!isInteger(t) || at + serialLen(t) > size) return true; // decoded, or sent to SQL, as before
    const int64_t category = readInteger(t, rec + at);
    return category < 0 || category >= 256 || categories.test(size_t(category));
}

bool EventPageReader::anyColumns(const uint8_t* rec, int64_t size, int64_t* value, bool* null) const {
    int64_t at = rec[0];
    for (size_t c = 0; c < m_columns; ++c) {
        const uint8_t t = rec[1 + c];
        const int64_t len = serialLen(t);
        if (t >= 0x80 || len < 0 || len > size - at) return false;
        if (m_read[c]) {
            null[c] = t == 0;
            // A real track id: SQL reads that record (as it did before this reader).
            if (t == 7 && c == m_column[TrackId]) return false;
            if (t != 0 && !integerValue(t, rec + at, value[c])) return false;
        }
        at += len;
    }
    return true;
}

bool EventPageReader::decode(int64_t rowid, const uint8_t* rec, int64_t size, int64_t trackId, EventRecord& e,
                             bool& ofTrack) const {
    // A one-byte header size and one-byte serial types (integers, NULLs, reals, short text or
    // blobs where no field is read), as many as the fields need.
    const int64_t headerSize = size > 0 ? rec[0] : 0;
    if (headerSize >= 0x80 || headerSize > size || size_t(headerSize - 1) < m_columns) return false;
    int64_t value[kMaxColumns];
    bool null[kMaxColumns];
    if (!integerColumns(rec, size, value, null) && !anyColumns(rec, size, value, null)) return false;
    auto get = [&](Field f, int64_t ifNull) {
        const size_t c = m_column[f];
        return null[c] ? ifNull : value[c];
    };
    ofTrack = !null[m_column[TrackId]] && value[m_column[TrackId]] == trackId;
    if (!ofTrack) return true;
    e.id = rowid;
    e.ts = get(Ts, 0);
    e.dur = get(Dur, 0);
    e.categoryId = int32_t(get(CategoryId, 0));
    e.nameId = get(NameId, 0);
    e.depth = int32_t(get(Depth, 0));
    e.bytes = get(Bytes, -1);
    e.objectId = get(ObjectId, -1);
    e.peer = int32_t(get(Peer, -1));
    e.communicatorId = get(CommunicatorId, -1);
    e.seq = get(Seq, -1);
    const int64_t count = get(Count, 1);
    e.count = count < 1 ? 1 : int32_t(std::min<int64_t>(count, INT32_MAX));
    e.correlationId = get(CorrelationId, -1);
    return true;
}

} // namespace hpcprof::analyzer::detail

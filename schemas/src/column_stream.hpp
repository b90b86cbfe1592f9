// SPDX-License-Identifier: MIT
// One column of the columnar packed form (docs/trace-schema.md "Packed traces"): a stream of
// integer-or-NULL values, each a varint of up to 65 bits (0: NULL, else zigzag(v - previous) + 1
// for a delta column, zigzag(v) + 1 otherwise), compressed as its own zstd frame. Writer and reader stream:
// memory stays a few buffers per column whatever the number of events.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include <zstd.h>

#include "hpcprof/status.hpp"

namespace hpcprof::schema::columns {

inline uint64_t zigzag(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
inline int64_t unzigzag(uint64_t u) { return int64_t(u >> 1) ^ -int64_t(u & 1); }

/// Encodes values into a zstd frame written to a temporary file (copied into the packed file
/// once every column is done).
class ColumnWriter {
public:
    ColumnWriter(bool delta, int level, int threads);
    ~ColumnWriter();
    ColumnWriter(const ColumnWriter&) = delete;
    ColumnWriter& operator=(const ColumnWriter&) = delete;

    void add(std::optional<int64_t> v) {
        // zigzag + 1 needs 65 bits for the largest code (INT64_MIN, or a delta that wraps).
        unsigned __int128 code = 0;
        if (v) {
            code = (unsigned __int128)zigzag(m_delta ? int64_t(uint64_t(*v) - uint64_t(m_prev)) : *v) + 1;
            m_prev = *v;
        }
        if (m_buf.size() + 10 > kBuffer) flush(false);
        while (code >= 0x80) {
            m_buf.push_back(uint8_t(code) | 0x80);
            code >>= 7;
        }
        m_buf.push_back(uint8_t(code));
    }
    /// Ends the frame; then compressedSize() and copyTo() are valid.
    Status finish() { return flush(true); }
    uint64_t compressedSize() const { return m_compressed; }
    uint64_t rawSize() const { return m_raw; }
    /// Appends the frame to `out`.
    Status copyTo(std::FILE* out);

private:
    static constexpr size_t kBuffer = 1 << 16;
    Status flush(bool end);
    bool m_delta;
    int64_t m_prev = 0;
    std::vector<uint8_t> m_buf;
    ZSTD_CCtx* m_ctx;
    std::FILE* m_tmp;
    uint64_t m_raw = 0, m_compressed = 0;
    Status m_error;
};

/// Decodes one column's frame, read from `path` at `offset` (its own file handle).
class ColumnReader {
public:
    ColumnReader(const std::string& path, uint64_t offset, uint64_t size, bool delta);
    ~ColumnReader();
    ColumnReader(const ColumnReader&) = delete;
    ColumnReader& operator=(const ColumnReader&) = delete;

    /// The next value (nullopt for NULL); false at the end of the data or on damage.
    bool next(std::optional<int64_t>& v) {
        unsigned __int128 code = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (m_pos == m_end && !refill()) return false;
            uint8_t b = m_out[m_pos++];
            code |= (unsigned __int128)(b & 0x7f) << shift;
            if (!(b & 0x80)) {
                if (code == 0) {
                    v.reset();
                } else {
                    int64_t x = unzigzag(uint64_t(code - 1));
                    m_prev = m_delta ? int64_t(uint64_t(m_prev) + uint64_t(x)) : x;
                    v = m_prev;
                }
                return true;
            }
        }
        m_error = Status::error("damaged packed trace (bad value in a column)");
        return false;
    }
    /// Whether the frame ended cleanly with all its data read.
    bool atCleanEnd();
    const Status& error() const { return m_error; }

private:
    bool refill();
    bool m_delta;
    int64_t m_prev = 0;
    std::FILE* m_in;
    uint64_t m_left; ///< compressed bytes not yet read
    ZSTD_DCtx* m_ctx;
    std::vector<uint8_t> m_inBuf, m_out;
    size_t m_inPos = 0, m_inEnd = 0, m_pos = 0, m_end = 0; ///< m_out[m_pos, m_end) is decoded
    size_t m_pending = 1; ///< what ZSTD_decompressStream last returned (0: frame ended)
    Status m_error;
};

} // namespace hpcprof::schema::columns

// SPDX-License-Identifier: MIT
#include "column_stream.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "temp_file.hpp"

namespace hpcprof::schema::columns {

ColumnWriter::ColumnWriter(bool delta, int level, int threads)
    : m_delta(delta), m_ctx(ZSTD_createCCtx()), m_tmp(tempfile::anonymous()) {
    m_buf.reserve(kBuffer);
    ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_checksumFlag, 1);
    if (threads > 0) ZSTD_CCtx_setParameter(m_ctx, ZSTD_c_nbWorkers, threads);
    if (!m_tmp) m_error = Status::error(tempfile::failure(errno));
}

ColumnWriter::~ColumnWriter() {
    ZSTD_freeCCtx(m_ctx);
    if (m_tmp) std::fclose(m_tmp);
}

Status ColumnWriter::flush(bool end) {
    if (!m_error.ok()) {
        m_buf.clear();
        return m_error;
    }
    m_raw += m_buf.size();
    ZSTD_inBuffer in{m_buf.data(), m_buf.size(), 0};
    std::vector<char> out(ZSTD_CStreamOutSize());
    size_t remaining = 1;
    while (end ? remaining != 0 : in.pos < in.size) {
        ZSTD_outBuffer ob{out.data(), out.size(), 0};
        remaining = ZSTD_compressStream2(m_ctx, &ob, &in, end ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(remaining)) {
            m_error = Status::error(std::string("zstd: ") + ZSTD_getErrorName(remaining));
            break;
        }
        if (std::fwrite(out.data(), 1, ob.pos, m_tmp) != ob.pos) {
            m_error = Status::error(tempfile::failure(errno));
            break;
        }
        m_compressed += ob.pos;
    }
    m_buf.clear();
    return m_error;
}

Status ColumnWriter::copyTo(std::FILE* out) {
    if (!m_error.ok()) return m_error;
    std::rewind(m_tmp);
    std::vector<char> buf(1 << 16);
    while (size_t got = std::fread(buf.data(), 1, buf.size(), m_tmp))
        if (std::fwrite(buf.data(), 1, got, out) != got)
            return Status::error(std::string("write: ") + std::strerror(errno));
    if (std::ferror(m_tmp)) return Status::error(tempfile::failure(errno));
    return {};
}

ColumnReader::ColumnReader(const std::string& path, uint64_t offset, uint64_t size, bool delta)
    : m_delta(delta), m_in(std::fopen(path.c_str(), "rb")), m_left(size), m_ctx(ZSTD_createDCtx()),
      m_inBuf(ZSTD_DStreamInSize()), m_out(ZSTD_DStreamOutSize()) {
    if (!m_in || std::fseek(m_in, long(offset), SEEK_SET) != 0)
        m_error = Status::error(path + ": " + std::strerror(errno));
}

ColumnReader::~ColumnReader() {
    ZSTD_freeDCtx(m_ctx);
    if (m_in) std::fclose(m_in);
}

bool ColumnReader::refill() {
    if (!m_error.ok()) return false;
    for (;;) {
        if (m_inPos == m_inEnd && m_left > 0) {
            size_t want = size_t(std::min<uint64_t>(m_left, m_inBuf.size()));
            m_inEnd = std::fread(m_inBuf.data(), 1, want, m_in);
            m_inPos = 0;
            m_left -= m_inEnd;
            if (m_inEnd == 0) {
                m_error = Status::error("damaged packed trace (file is truncated)");
                return false;
            }
        }
        if (m_inPos == m_inEnd && m_pending == 0) return false; // the frame's end
        ZSTD_inBuffer ib{m_inBuf.data(), m_inEnd, m_inPos};
        ZSTD_outBuffer ob{m_out.data(), m_out.size(), 0};
        m_pending = ZSTD_decompressStream(m_ctx, &ob, &ib);
        m_inPos = ib.pos;
        if (ZSTD_isError(m_pending)) {
            m_error = Status::error(std::string("damaged packed trace (") +
                                    ZSTD_getErrorName(m_pending) + ")");
            return false;
        }
        if (ob.pos > 0) {
            m_pos = 0;
            m_end = ob.pos;
            return true;
        }
        if (m_inPos == m_inEnd && m_left == 0 && m_pending != 0) {
            m_error = Status::error("damaged packed trace (file is truncated)");
            return false;
        }
    }
}

bool ColumnReader::atCleanEnd() {
    if (m_pos < m_end) return false;
    return !refill() && m_error.ok() && m_pending == 0 && m_left == 0 && m_inPos == m_inEnd;
}

} // namespace hpcprof::schema::columns

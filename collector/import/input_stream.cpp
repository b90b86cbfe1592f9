// SPDX-License-Identifier: MIT
#include "input_stream.hpp"

#include <cerrno>
#include <cstring>

namespace hpcprof::import {

InputStreamBuf::~InputStreamBuf() {
    if (m_file) gzclose(m_file);
}

Status InputStreamBuf::open(const std::string& path) {
    errno = 0;
    m_file = gzopen(path.c_str(), "rb");
    if (!m_file)
        return Status::error("cannot open " + path + ": " +
                             (errno ? std::strerror(errno) : "out of memory"));
    gzbuffer(m_file, 256 * 1024);
    m_buffer.resize(kChunk);
    setg(m_buffer.data(), m_buffer.data(), m_buffer.data());
    return {};
}

uint64_t InputStreamBuf::fileBytesRead() const {
    if (!m_file) return 0;
    z_off_t off = gzoffset(m_file);
    return off < 0 ? 0 : uint64_t(off);
}

InputStreamBuf::int_type InputStreamBuf::underflow() {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!m_file || !m_error.empty()) return traits_type::eof();
    m_consumedBefore += uint64_t(egptr() - eback());
    int n = gzread(m_file, m_buffer.data(), unsigned(m_buffer.size()));
    if (n < 0) {
        int code = 0;
        const char* msg = gzerror(m_file, &code);
        m_error = msg ? msg : "read error";
        n = 0;
    } else if (n == 0) {
        // A gzip stream cut short reads as a clean end unless we ask zlib.
        int code = 0;
        const char* msg = gzerror(m_file, &code);
        if (code != Z_OK && code != Z_STREAM_END) m_error = msg ? msg : "read error";
    }
    setg(m_buffer.data(), m_buffer.data(), m_buffer.data() + n);
    if (n == 0) return traits_type::eof();
    return traits_type::to_int_type(*gptr());
}

} // namespace hpcprof::import

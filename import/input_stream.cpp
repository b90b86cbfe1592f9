// SPDX-License-Identifier: MIT
#include "input_stream.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "hpcprof/schema/file_io.hpp"

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

namespace hpcprof::import {

BlockInput::~BlockInput() {
    if (m_gz) gzclose(m_gz);
    if (m_fd >= 0) ::close(m_fd);
}

Status BlockInput::open(const std::string& path) {
    errno = 0;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Status::error("cannot open " + path + ": " + std::strerror(errno));
    unsigned char magic[2] = {0, 0};
    ssize_t n = ::pread(fd, magic, 2, 0);
    if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        m_gz = gzdopen(fd, "rb");
        if (!m_gz) {
            ::close(fd);
            return Status::error("cannot open " + path + ": out of memory");
        }
        gzbuffer(m_gz, 256 * 1024);
    } else {
        m_fd = fd;
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    return {};
}

size_t BlockInput::read(char* dst, size_t n) {
    if (!m_error.empty()) return 0;
    size_t got = 0;
    if (m_fd >= 0) {
        got = schema::fileio::readFull(m_fd, dst, n);
        if (got < n && errno != 0) m_error = std::strerror(errno);
    } else if (m_gz) {
        int r = gzread(m_gz, dst, unsigned(n));
        int code = 0;
        if (r < 0) {
            const char* msg = gzerror(m_gz, &code);
            m_error = msg ? msg : "read error";
        } else {
            got = size_t(r);
            if (r == 0) { // a gzip stream cut short reads as a clean end unless we ask zlib
                const char* msg = gzerror(m_gz, &code);
                if (code != Z_OK && code != Z_STREAM_END) m_error = msg ? msg : "read error";
            }
        }
    }
    m_bytes += got;
    return got;
}

uint64_t BlockInput::fileBytesRead() const {
    if (m_gz) {
        z_off_t off = gzoffset(m_gz);
        return off < 0 ? 0 : uint64_t(off);
    }
    return m_bytes;
}

} // namespace hpcprof::import

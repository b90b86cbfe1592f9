// SPDX-License-Identifier: MIT
#include "input_stream.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

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

namespace hpcprof::import {

BlockInput::~BlockInput() {
    if (m_map) ::munmap(m_map, m_mapLength);
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
        while (got < n) {
            ssize_t r = ::read(m_fd, dst + got, n - got);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) {
                m_error = std::strerror(errno);
                break;
            }
            if (r == 0) break;
            got += size_t(r);
        }
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

bool BlockInput::mapWhole(size_t padding) {
    struct stat st;
    if (m_fd < 0 || m_bytes != 0 || m_map || ::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode) ||
        st.st_size <= 0)
        return false;
    size_t page = size_t(::sysconf(_SC_PAGESIZE));
    uint64_t size = uint64_t(st.st_size);
    if (size > SIZE_MAX / 2) return false;
    // Reserve the file's pages plus zero pages for the padding, then map the file over the
    // front: reads past its end see zeros instead of faulting (the last file page is
    // zero-filled past the end by the kernel; the pages after it are anonymous).
    size_t fileLength = (size_t(size) + page - 1) / page * page;
    size_t length = fileLength + (padding + page - 1) / page * page;
    void* base = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) return false;
    void* file = ::mmap(base, size_t(size), PROT_READ, MAP_PRIVATE | MAP_FIXED, m_fd, 0);
    if (file == MAP_FAILED) {
        ::munmap(base, length);
        return false;
    }
    ::madvise(base, fileLength, MADV_SEQUENTIAL);
    m_map = static_cast<char*>(base);
    m_mapSize = size;
    m_mapLength = length;
    return true;
}

size_t BlockInput::advanceMapped(size_t n) {
    if (!m_map || m_bytes >= m_mapSize) return 0;
    if (n > m_mapSize - m_bytes) n = size_t(m_mapSize - m_bytes);
#ifdef MADV_POPULATE_READ
    // Fault the window in with one call (instead of a fault every few pages while parsing);
    // older kernels refuse it and the pages fault in as they are touched.
    size_t page = size_t(::sysconf(_SC_PAGESIZE));
    uint64_t from = m_bytes / page * page;
    ::madvise(m_map + from, size_t(m_bytes + n - from), MADV_POPULATE_READ);
#endif
    m_bytes += n;
    return n;
}

void BlockInput::releaseMapped(uint64_t offset) {
    if (!m_map) return;
    size_t page = size_t(::sysconf(_SC_PAGESIZE));
    uint64_t upto = offset / page * page;
    if (upto <= m_released) return;
    ::madvise(m_map + m_released, size_t(upto - m_released), MADV_DONTNEED);
    m_released = upto;
}

uint64_t BlockInput::fileBytesRead() const {
    if (m_gz) {
        z_off_t off = gzoffset(m_gz);
        return off < 0 ? 0 : uint64_t(off);
    }
    return m_bytes;
}

} // namespace hpcprof::import

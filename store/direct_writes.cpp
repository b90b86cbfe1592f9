// SPDX-License-Identifier: MIT
#include "direct_writes.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace hpcprof::store {

DirectWriter& DirectWriter::operator=(DirectWriter&& o) noexcept {
    if (this != &o) {
        close();
        m_fd = o.m_fd;
        o.m_fd = -1;
    }
    return *this;
}

DirectWriter::~DirectWriter() { close(); }

void DirectWriter::close() {
    if (m_fd >= 0) ::close(m_fd);
    m_fd = -1;
}

void DirectWriter::open(const std::filesystem::path& path) {
    close();
    const char* off = std::getenv("HPCPROF_NO_DIRECT_IO");
    if (off && *off && std::strcmp(off, "0") != 0) return;
    m_fd = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
}

size_t DirectWriter::write(const uint8_t* data, size_t bytes, off_t at, bool& failed) {
    failed = false;
    size_t done = 0;
    while (done < bytes && m_fd >= 0) {
        const ssize_t w = pwrite(m_fd, data + done, bytes - done, at + off_t(done));
        if (w > 0) {
            done += size_t(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EINVAL) { // alignment or O_DIRECT refused here: buffered from now
            close();
            break;
        }
        failed = true;
        break;
    }
    return done;
}

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
#include "direct_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

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

bool directIoWanted() {
    const char* off = std::getenv("HPCPROF_NO_DIRECT_IO");
    return !(off && *off && std::strcmp(off, "0") != 0);
}

bool readsPastCache(const std::filesystem::path& shard) { return directIoWanted() && cachedShare(shard) < 0.5; }

double cachedShare(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    struct stat st{};
    double share = 1;
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    if (fstat(fd, &st) == 0 && st.st_size > 0) {
        const size_t bytes = size_t(st.st_size);
        void* map = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED) {
            std::vector<unsigned char> resident((bytes + page - 1) / page);
            if (mincore(map, bytes, resident.data()) == 0) {
                size_t in = 0;
                for (unsigned char r : resident) in += r & 1;
                share = double(in) / double(resident.size());
            }
            munmap(map, bytes);
        }
    }
    ::close(fd);
    return share;
}

void DirectWriter::open(const std::filesystem::path& path) {
    close();
    if (!directIoWanted()) return;
    m_fd = ::open(path.c_str(), O_WRONLY | O_DIRECT | O_CLOEXEC);
}

size_t DirectWriter::write(const uint8_t* data, size_t bytes, off_t at, bool& failed) {
    failed = false;
    if (m_fd < 0) return 0;
    const size_t done = schema::fileio::pwriteFull(m_fd, data, bytes, at);
    if (done < bytes) {
        if (errno == EINVAL) { // alignment or O_DIRECT refused here: buffered from now
            close();
        } else {
            failed = true;
        }
    }
    return done;
}

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
#include "hpcprof/schema/sqlite_pages.hpp"

#include "hpcprof/schema/file_io.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace hpcprof::schema::pages {

int getVarintSlow(const uint8_t* p, uint64_t* v) {
    uint64_t x = 0;
    for (int i = 0; i < 8; ++i) {
        x = x << 7 | (p[i] & 0x7f);
        if (!(p[i] & 0x80)) {
            *v = x;
            return i + 1;
        }
    }
    *v = x << 8 | p[8];
    return 9;
}

int getVarintInSlow(const uint8_t* p, const uint8_t* end, uint64_t* v) {
    if (p >= end) return 0;
    if (end - p >= 9) return getVarint(p, v);
    uint8_t tmp[9] = {};
    std::memcpy(tmp, p, size_t(end - p));
    const int n = getVarint(tmp, v);
    return n <= end - p ? n : 0;
}

PageFile::~PageFile() {
    if (mapped) munmap(const_cast<uint8_t*>(mapped), size_t(mappedPages) * pageSize);
    if (m_span) munmap(m_span, m_spanBytes);
    if (m_directFd >= 0) ::close(m_directFd);
    if (fd >= 0) ::close(fd);
}

using fileio::kDirectIoAlign;

bool PageFile::reserveSpan(size_t bytes) {
    if (m_spanBytes >= bytes) return true;
    if (m_span) munmap(m_span, m_spanBytes);
    m_spanBytes = (bytes + kDirectIoAlign - 1) / kDirectIoAlign * kDirectIoAlign; // mapped: page-aligned
    void* p = mmap(nullptr, m_spanBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    m_span = p == MAP_FAILED ? nullptr : static_cast<uint8_t*>(p);
    if (!m_span) m_spanBytes = 0;
    return m_span != nullptr;
}

bool PageFile::preload(uint32_t first, uint32_t count) {
    m_spanCount = 0;
    if (pageSize % kDirectIoAlign != 0 || first < 1 || count == 0 || uint64_t(first) + count - 1 > pageCount)
        return false;
    if (m_directFd == -2) m_directFd = ::open(m_path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    const size_t bytes = size_t(count) * pageSize;
    if (m_directFd < 0 || !reserveSpan(bytes + kSlack)) return false;
    if (!fileio::preadAll(m_directFd, m_span, bytes, off_t(first - 1) * pageSize)) {
        if (errno == EINVAL) { // refused here after all: page by page from now on
            ::close(m_directFd);
            m_directFd = -1;
        }
        return false;
    }
    std::memset(m_span + bytes, 0, kSlack);
    m_spanFirst = first;
    m_spanCount = count;
    return true;
}

Status PageFile::open(const std::filesystem::path& path, int flags) {
    fd = ::open(path.c_str(), flags | O_CLOEXEC);
    if (fd < 0) return Status::error(path.string() + ": cannot open");
    m_path = path.string();
    uint8_t h[100];
    struct stat st{};
    if (pread(fd, h, sizeof h, 0) != ssize_t(sizeof h) || std::memcmp(h, "SQLite format 3", 16) != 0 ||
        fstat(fd, &st) != 0)
        return Status::error(path.string() + ": not a SQLite file");
    pageSize = get16(h + 16) == 1 ? 65536 : get16(h + 16);
    if (pageSize < 512 || (pageSize & (pageSize - 1)) || h[20] > pageSize - 480)
        return Status::error(path.string() + ": not a SQLite file");
    usable = pageSize - h[20];
    writeVersion = h[18], readVersion = h[19];
    pageCount = uint32_t(std::min<uint64_t>(uint64_t(st.st_size) / pageSize, UINT32_MAX));
    // The header's page count holds when its change counter is the one it was written with.
    if (get32(h + 24) == get32(h + 92) && get32(h + 28) != 0) pageCount = std::min(pageCount, get32(h + 28));
    return {};
}

Status PageFile::map() {
    struct stat st{};
    if (fstat(fd, &st) != 0 || st.st_size < off_t(pageSize)) return Status::error("cannot map a shard");
    void* p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return Status::error("cannot map a shard");
    madvise(p, size_t(st.st_size), MADV_SEQUENTIAL);
    mapped = static_cast<const uint8_t*>(p);
    mappedPages = uint32_t(uint64_t(st.st_size) / pageSize);
    pageCount = std::min(pageCount, mappedPages);
    return {};
}

void releaseMapped(const uint8_t* p, size_t bytes) {
    const uintptr_t system = uintptr_t(sysconf(_SC_PAGESIZE));
    const uintptr_t from = uintptr_t(p) & ~(system - 1), to = (uintptr_t(p) + bytes) & ~(system - 1);
    if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

void PageFile::release(const uint8_t* page) const { releaseMapped(page, pageSize); }

bool PageFile::read(uint32_t pgno, uint8_t* buf) const {
    return pread(fd, buf, pageSize, off_t(pgno - 1) * pageSize) == ssize_t(pageSize);
}

const uint8_t* PageFile::page(uint32_t pgno, int depth) const {
    if (pgno < 1 || pgno > pageCount || depth < 0 || depth >= kMaxDepth) return nullptr;
    if (mapped) return at(pgno);
    if (pgno - m_spanFirst < m_spanCount) return m_span + size_t(pgno - m_spanFirst) * pageSize;
    if (m_buffers.empty()) m_buffers.resize(kMaxDepth);
    std::vector<uint8_t>& buffer = m_buffers[size_t(depth)];
    if (buffer.empty()) buffer.resize(size_t(pageSize) + kSlack);
    uint8_t* buf = buffer.data();
    return read(pgno, buf) ? buf : nullptr;
}

} // namespace hpcprof::schema::pages

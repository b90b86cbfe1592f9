// SPDX-License-Identifier: MIT
// The shard merge's I/O past the page cache (O_DIRECT).
//
// Writes. The merge writes every event page of the trace once and never reads it back. Through
// the page cache each page costs a copy into a fresh cache page, and the cache, full of the
// shards just read, must first give one up: on a 250 M-event merge the kernel took 13-21 s of
// system time against 16 s of user time. Written direct, the device reads the pages from the
// merge's own buffers, and the system time is 2.7 s. Only writes whose buffer, file offset and
// length are multiples of kAlign, of at least kMinBytes, go direct (one synchronous write per
// buffer of pages: small ones would wait on the device one by one).
//
// Reads. A shard mostly out of the cache (one that came over a shared file system) has each
// window's leaves read in one piece past the cache (schema's PageFile::preload); a cached shard
// is read through the cache, which is faster than the device.
//
// A file system that refuses O_DIRECT, at open or at a write or read (EINVAL), gets buffered
// I/O from then on; HPCPROF_NO_DIRECT_IO=1 asks for it from the start. Nothing else changes:
// the same bytes land at the same offsets, and SQLite reads them back as any other.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "hpcprof/schema/file_io.hpp"

namespace hpcprof::store {

/// The share (0 to 1) of `path`'s pages in the page cache (mincore of a mapping that is never
/// touched); 1 when it cannot tell.
double cachedShare(const std::filesystem::path& path);

/// Whether direct I/O is wanted at all (HPCPROF_NO_DIRECT_IO unset, empty or 0).
bool directIoWanted();

/// Whether a shard's leaves are read past the page cache: direct I/O wanted, and under half of
/// the shard cached. Asked once per shard, before any of it is read (reads through the cache
/// would change the answer).
bool readsPastCache(const std::filesystem::path& shard);

class DirectWriter {
public:
    static constexpr size_t kAlign = schema::fileio::kDirectIoAlign;
    static constexpr size_t kMinBytes = size_t(1) << 20;

    DirectWriter() = default;
    DirectWriter(const DirectWriter&) = delete;
    DirectWriter& operator=(const DirectWriter&) = delete;
    DirectWriter(DirectWriter&& o) noexcept : m_fd(o.m_fd) { o.m_fd = -1; }
    DirectWriter& operator=(DirectWriter&& o) noexcept;
    ~DirectWriter();

    /// A second descriptor of the existing file `path`, opened O_DIRECT; none (every write
    /// buffered) where the file system refuses it or HPCPROF_NO_DIRECT_IO is set.
    void open(const std::filesystem::path& path);

    /// Whether `bytes` at `data`, to offset `at`, can go direct.
    bool fits(const void* data, size_t bytes, off_t at) const {
        return m_fd >= 0 && bytes >= kMinBytes && (uintptr_t(data) | bytes | uint64_t(at)) % kAlign == 0;
    }

    /// Writes what it can of `bytes` at `data` to offset `at`; how many bytes it wrote. Short of
    /// `bytes`: with `failed` false the file system refused the rest (direct writes are off from
    /// now: the caller writes the rest buffered), with `failed` true the write failed (errno).
    size_t write(const uint8_t* data, size_t bytes, off_t at, bool& failed);

    bool active() const { return m_fd >= 0; }

private:
    void close();
    int m_fd = -1;
};

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
// Reading a plain or gzip-compressed file (zlib reads both transparently) in fixed-size chunks
// instead of loading it: a std::streambuf for nlohmann's parser, and a block reader that fills
// the caller's buffer directly (plain files bypass zlib's copy).
#pragma once

#include <zlib.h>

#include <cstdint>
#include <streambuf>
#include <string>
#include <vector>

#include "hpcprof/status.hpp"

namespace hpcprof::import {

class InputStreamBuf : public std::streambuf {
public:
    InputStreamBuf() = default;
    ~InputStreamBuf() override;
    InputStreamBuf(const InputStreamBuf&) = delete;
    InputStreamBuf& operator=(const InputStreamBuf&) = delete;

    /// Opens `path`; an error names the file and the reason.
    Status open(const std::string& path);

    /// Uncompressed bytes handed to the reader so far.
    uint64_t bytesRead() const { return m_consumedBefore + uint64_t(gptr() - eback()); }
    /// Compressed (on-disk) bytes read so far, for progress against the file size.
    uint64_t fileBytesRead() const;
    /// The decompression error met, if any (a damaged or truncated gzip stream).
    const std::string& readError() const { return m_error; }

protected:
    int_type underflow() override;

private:
    static constexpr size_t kChunk = 1 << 20;
    gzFile m_file = nullptr;
    std::vector<char> m_buffer;
    uint64_t m_consumedBefore = 0;
    std::string m_error;
};

/// Reads a file in caller-sized blocks: read(2) for plain files, zlib for gzip. A plain regular
/// file can instead be mapped whole and consumed in windows (no copy into a buffer): the caller
/// asks for each window (its pages are faulted in at once) and releases the pages behind it, so
/// the file's pages in memory stay bounded by about one window.
class BlockInput {
public:
    BlockInput() = default;
    ~BlockInput();
    BlockInput(const BlockInput&) = delete;
    BlockInput& operator=(const BlockInput&) = delete;

    /// Opens `path`; an error names the file and the reason.
    Status open(const std::string& path);
    /// Reads up to `n` bytes into `dst`; 0 at the end of the data or after an error.
    size_t read(char* dst, size_t n);
    /// Uncompressed bytes returned so far.
    uint64_t bytesRead() const { return m_bytes; }
    /// On-disk bytes read so far, for progress against the file size.
    uint64_t fileBytesRead() const;
    /// The read or decompression error met, if any (a damaged or truncated gzip stream).
    const std::string& readError() const { return m_error; }

    /// Maps a plain, non-empty regular file whole (before any read()); false if it is not one
    /// or the mapping fails (read() still works then). At least `padding` readable bytes
    /// follow the file's data in the mapping.
    bool mapWhole(size_t padding);
    /// The mapped file (mapWhole() succeeded), its size.
    const char* mappedData() const { return m_map; }
    uint64_t mappedSize() const { return m_mapSize; }
    /// Makes the next up to `n` bytes of the mapping available (faulted in ahead); returns how
    /// many, 0 at the end of the file. Counts them as read.
    size_t advanceMapped(size_t n);
    /// The caller no longer needs the mapping's bytes before `offset`: their pages are dropped.
    void releaseMapped(uint64_t offset);

private:
    int m_fd = -1;             ///< plain file
    gzFile m_gz = nullptr;     ///< gzip file
    uint64_t m_bytes = 0;
    std::string m_error;
    char* m_map = nullptr;     ///< mapWhole(): the file, then zero pages as padding
    uint64_t m_mapSize = 0;    ///< file size
    size_t m_mapLength = 0;    ///< whole reserved length
    uint64_t m_released = 0;   ///< pages before this offset were dropped
};

} // namespace hpcprof::import

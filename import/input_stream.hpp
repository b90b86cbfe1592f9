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

/// Reads a file in caller-sized blocks: read(2) for plain files, zlib for gzip.
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

private:
    int m_fd = -1;             ///< plain file
    gzFile m_gz = nullptr;     ///< gzip file
    uint64_t m_bytes = 0;
    std::string m_error;
};

} // namespace hpcprof::import

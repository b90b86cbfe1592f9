// SPDX-License-Identifier: MIT
// A std::streambuf over a plain or gzip-compressed file (zlib reads both transparently), so the
// JSON parser streams the file in fixed-size chunks instead of loading it.
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

} // namespace hpcprof::import

// SPDX-License-Identifier: MIT
#include "hpcprof/schema/packed_trace.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include <zstd.h>

#include "hpcprof/schema/file_io.hpp"

#include "columnar_pack.hpp"
#include "temp_file.hpp"
#include "zstd_file.hpp"

namespace hpcprof::schema {

namespace {

constexpr unsigned char kZstdMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};

/// A FILE* closed on every path.
struct File {
    std::FILE* f = nullptr;
    File(const std::string& path, const char* mode) : f(std::fopen(path.c_str(), mode)) {}
    ~File() {
        if (f) std::fclose(f);
    }
};


using Key = std::tuple<dev_t, ino_t, off_t, int64_t, int64_t>; // device, inode, size, mtime

std::mutex g_mutex;
std::map<Key, std::weak_ptr<const UnpackedTrace>> g_unpacked;

} // namespace

UnpackedTrace::UnpackedTrace(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}

UnpackedTrace::~UnpackedTrace() {
    ::close(m_fd);
    ::unlink(m_path.c_str());
}

bool isPackedTrace(const std::string& path) {
    File f(path, "rb");
    unsigned char head[4] = {};
    return f.f && std::fread(head, 1, 4, f.f) == 4 &&
           (std::memcmp(head, kZstdMagic, 4) == 0 || columnar::isColumnar(head));
}

Result<std::shared_ptr<const UnpackedTrace>> unpackIfPacked(const std::string& path) {
    File in(path, "rb");
    unsigned char head[4] = {};
    if (!in.f || std::fread(head, 1, 4, in.f) != 4) return std::shared_ptr<const UnpackedTrace>();
    const bool columns = columnar::isColumnar(head);
    if (!columns && std::memcmp(head, kZstdMagic, 4) != 0)
        return std::shared_ptr<const UnpackedTrace>(); // not packed: the plain open says the rest
    struct stat st;
    if (::fstat(::fileno(in.f), &st) != 0) return Status::error(path + ": " + std::strerror(errno));
    Key key{st.st_dev, st.st_ino, st.st_size, int64_t(st.st_mtim.tv_sec),
            int64_t(st.st_mtim.tv_nsec)};
    std::lock_guard lock(g_mutex);
    if (auto it = g_unpacked.find(key); it != g_unpacked.end())
        if (auto held = it->second.lock()) return held;
    std::rewind(in.f);
    std::string copyPath;
    // (SQLite resolves symbolic links when it opens a file, so an anonymous file reached through
    // /proc/self/fd cannot serve: the copy needs a name while it is open.)
    int fd = tempfile::named("hpcprof-unpacked", copyPath);
    if (fd < 0) return Status::error(path + ": cannot unpack: " + tempfile::failure(errno));
    auto copy = std::make_shared<const UnpackedTrace>(fd, copyPath); // removes it on every path
    HPCPROF_RETURN_IF_ERROR(columns ? columnar::unpack(in.f, path, fd, copyPath)
                                    : zstdfile::decompress(in.f, UINT64_MAX, fd, path));
    g_unpacked[key] = copy;
    return std::shared_ptr<const UnpackedTrace>(copy);
}

Result<PackForm> packTraceFile(const std::string& inPath, const std::string& outPath, int level,
                               int threads, PackForm form) {
    if (form == PackForm::Columns) {
        bool applicable = true;
        HPCPROF_RETURN_IF_ERROR(columnar::pack(inPath, outPath, level, threads, applicable));
        if (applicable) return PackForm::Columns;
    }
    File in(inPath, "rb"), out(outPath, "wb");
    if (!in.f) return Status::error(inPath + ": " + std::strerror(errno));
    if (!out.f) return Status::error(outPath + ": " + std::strerror(errno));
    struct stat st;
    if (::fstat(::fileno(in.f), &st) != 0) return Status::error(inPath + ": " + std::strerror(errno));
    uint64_t written = 0;
    HPCPROF_RETURN_IF_ERROR(zstdfile::compress(in.f, out.f, level, threads, uint64_t(st.st_size), written));
    if (std::ferror(in.f)) return Status::error(inPath + ": " + std::strerror(errno));
    if (std::fflush(out.f) != 0) return Status::error(outPath + ": " + std::strerror(errno));
    return PackForm::Whole;
}

namespace zstdfile {

namespace {
struct ZstdD {
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    ~ZstdD() { ZSTD_freeDCtx(ctx); }
};
struct ZstdC {
    ZSTD_CCtx* ctx = ZSTD_createCCtx();
    ~ZstdC() { ZSTD_freeCCtx(ctx); }
};
} // namespace

Status compress(std::FILE* in, std::FILE* out, int level, int threads, uint64_t pledged,
                uint64_t& written) {
    ZstdC c;
    ZSTD_CCtx_setParameter(c.ctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c.ctx, ZSTD_c_checksumFlag, 1);
    if (threads > 0) ZSTD_CCtx_setParameter(c.ctx, ZSTD_c_nbWorkers, threads);
    if (pledged > 0) ZSTD_CCtx_setPledgedSrcSize(c.ctx, pledged);
    std::vector<char> inBuf(ZSTD_CStreamInSize()), outBuf(ZSTD_CStreamOutSize());
    written = 0;
    for (;;) {
        size_t got = std::fread(inBuf.data(), 1, inBuf.size(), in);
        bool last = got < inBuf.size();
        ZSTD_inBuffer ib{inBuf.data(), got, 0};
        size_t remaining = 1;
        while (last ? remaining != 0 : ib.pos < ib.size) {
            ZSTD_outBuffer ob{outBuf.data(), outBuf.size(), 0};
            remaining = ZSTD_compressStream2(c.ctx, &ob, &ib, last ? ZSTD_e_end : ZSTD_e_continue);
            if (ZSTD_isError(remaining))
                return Status::error(std::string("zstd: ") + ZSTD_getErrorName(remaining));
            if (std::fwrite(outBuf.data(), 1, ob.pos, out) != ob.pos)
                return Status::error(std::string("write: ") + std::strerror(errno));
            written += ob.pos;
        }
        if (last) break;
    }
    return {};
}

Status decompress(std::FILE* in, uint64_t limit, int fd, const std::string& path) {
    ZstdD d;
    std::vector<char> inBuf(ZSTD_DStreamInSize()), outBuf(ZSTD_DStreamOutSize());
    size_t pending = 1; // 0 once a frame ended
    bool frames = false;
    while (limit > 0) {
        size_t got = std::fread(inBuf.data(), 1, size_t(std::min<uint64_t>(limit, inBuf.size())), in);
        if (got == 0) break;
        if (limit != UINT64_MAX) limit -= got;
        ZSTD_inBuffer ib{inBuf.data(), got, 0};
        while (ib.pos < ib.size) {
            ZSTD_outBuffer ob{outBuf.data(), outBuf.size(), 0};
            pending = ZSTD_decompressStream(d.ctx, &ob, &ib);
            if (ZSTD_isError(pending))
                return Status::error(path + ": damaged packed trace (" +
                                     ZSTD_getErrorName(pending) + ")");
            frames = true;
            if (!fileio::writeAll(fd, outBuf.data(), ob.pos))
                return Status::error(path + ": cannot unpack: " + tempfile::failure(errno));
        }
    }
    if (std::ferror(in)) return Status::error(path + ": cannot read: " + std::strerror(errno));
    if (!frames || pending != 0)
        return Status::error(path + ": damaged packed trace (file is truncated)");
    return {};
}

} // namespace zstdfile

} // namespace hpcprof::schema

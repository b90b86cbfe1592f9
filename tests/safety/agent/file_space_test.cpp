// SPDX-License-Identifier: MIT
// Disk space for raw files is secured before a page is mapped (agent/runtime/file_space.hpp):
// a full filesystem is an error code, and on a filesystem without fallocate the blocks are
// written, never over bytes the file already has.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "runtime/file_space.hpp"
#include "scratch_mount.hpp"

using hpcprof::agent::dropReasonFor;
using hpcprof::agent::fileGrowsByWriting;
using hpcprof::agent::reserveFileSpace;
using hpcprof::schema::raw::DropReason;
using hpcprof::test::ScratchMount;

namespace {

/// Bytes the file has blocks for.
int64_t allocatedBytes(int fd) {
    struct stat st;
    return ::fstat(fd, &st) == 0 ? int64_t(st.st_blocks) * 512 : -1;
}

} // namespace

TEST_CASE("a full filesystem is ENOSPC when the space is asked for, and mapped space is usable",
          "[agent][file_space]") {
    ScratchMount fs("tmpfs", "size=64k");
    if (!fs.ok()) {
        WARN("SKIPPED: " << fs.why());
        return;
    }
    int fd = ::open((fs / "raw").c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(reserveFileSpace(fd, 0, 32 * 1024) == 0);
    CHECK(allocatedBytes(fd) >= 32 * 1024);
    // The secured pages take writes through a shared mapping (no SIGBUS) even when the
    // filesystem is full after them.
    int filler = ::open((fs / "filler").c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(filler >= 0);
    CHECK(reserveFileSpace(filler, 0, 1 << 20) == ENOSPC);
    auto* p = static_cast<char*>(
        ::mmap(nullptr, 32 * 1024, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    REQUIRE(p != MAP_FAILED);
    for (int i = 0; i < 32 * 1024; i += 4096) p[i] = 'x';
    ::munmap(p, 32 * 1024);
    // Whatever is left, asking for more than the size of the filesystem fails with ENOSPC.
    CHECK(reserveFileSpace(fd, 32 * 1024, 128 * 1024) == ENOSPC);
    ::close(filler);
    ::close(fd);
}

TEST_CASE("without fallocate the space is written as zeros, past the file's end only",
          "[agent][file_space]") {
    ScratchMount fs("ramfs");
    if (!fs.ok()) {
        WARN("SKIPPED: " << fs.why());
        return;
    }
    int fd = ::open((fs / "raw").c_str(), O_CREAT | O_RDWR, 0644);
    REQUIRE(fd >= 0);
    // The helper may not write: it gets EOPNOTSUPP and learns that files grow by writing.
    CHECK(reserveFileSpace(fd, 0, 8192, /*mayWrite=*/false) == EOPNOTSUPP);
    CHECK(fileGrowsByWriting());
    REQUIRE(::pwrite(fd, "records", 7, 0) == 7);
    REQUIRE(reserveFileSpace(fd, 0, 3 * 4096 + 100) == 0);
    struct stat st;
    REQUIRE(::fstat(fd, &st) == 0);
    CHECK(st.st_size == 3 * 4096 + 100);
    char head[8] = {};
    REQUIRE(::pread(fd, head, 7, 0) == 7);
    CHECK(std::string(head) == "records"); // bytes the file had are kept
    char tail[100];
    REQUIRE(::pread(fd, tail, sizeof(tail), 3 * 4096) == 100);
    CHECK(std::string(tail, 100) == std::string(100, '\0'));
    ::close(fd);
}

TEST_CASE("errors of file operations map to the drop reasons the trace reports",
          "[agent][file_space]") {
    CHECK(dropReasonFor(ENOSPC) == DropReason::DiskFull);
    CHECK(dropReasonFor(EDQUOT) == DropReason::Quota);
    CHECK(dropReasonFor(EIO) == DropReason::FileError);
    CHECK(dropReasonFor(EMFILE) == DropReason::FileError);
}

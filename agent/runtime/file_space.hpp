// SPDX-License-Identifier: MIT
// Disk space for the agent's memory-mapped raw files, secured before a page is mapped.
//
// A write through a shared mapping to a page the filesystem has no block for faults with SIGBUS
// when the filesystem is full (tmpfs, ext4 holes), which would kill the program. So no page of a
// raw file is mapped until its blocks exist: fallocate() them, or, on a filesystem without
// fallocate (EOPNOTSUPP: some network and FUSE filesystems), write zeros over them. A full
// disk or an exhausted quota is then an error code at that moment (ENOSPC, EDQUOT), on which the
// thread stops recording and the program runs on.
#pragma once

#include <cstdint>

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::agent {

/// Gives bytes [offset, offset + length) of the open file `fd` blocks on disk. Returns 0, or the
/// errno of the failure (ENOSPC, EDQUOT, EIO, ...). Without fallocate it writes zeros if
/// `mayWrite` (else returns EOPNOTSUPP), and only past the file's current end: bytes already in
/// the file (mapped, maybe holding records) are never written. Raw system calls only: safe on
/// the provisioning helper; errno untouched.
int reserveFileSpace(int fd, uint64_t offset, uint64_t length, bool mayWrite = true);

/// True once a raw file's filesystem turned out to have no fallocate: files then grow by
/// writing, which only their own thread may do (see provisioner.cpp).
bool fileGrowsByWriting();

/// The DropReason for the errno of a failed file operation.
inline schema::raw::DropReason dropReasonFor(int err) {
    using schema::raw::DropReason;
    switch (err) {
    case 28: return DropReason::DiskFull; // ENOSPC
    case 122: return DropReason::Quota;   // EDQUOT
    default: return DropReason::FileError;
    }
}

} // namespace hpcprof::agent

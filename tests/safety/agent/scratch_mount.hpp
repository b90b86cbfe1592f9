// SPDX-License-Identifier: MIT
// Test support: a small filesystem of its own (a size-limited tmpfs, or a ramfs, which has no
// fallocate) mounted on a fresh folder for the duration of a test, so that a test can fill a
// disk without touching the machine's. Needs CAP_SYS_ADMIN (CI runs as root); when mounting is
// refused, ok() is false and why() says why, for the test's "SKIPPED:" line.
#pragma once

#include <sys/mount.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "process_runner.hpp"

namespace hpcprof::test {

class ScratchMount {
public:
    /// `type`: "tmpfs" (with `options` such as "size=1m") or "ramfs".
    explicit ScratchMount(const char* type, const std::string& options = {}) {
        if (::mount(type, m_dir.path().c_str(), type, MS_NOSUID | MS_NODEV,
                    options.empty() ? nullptr : options.c_str()) == 0)
            m_mounted = true;
        else
            m_why = std::string("cannot mount a ") + type + " for the test (" +
                    std::strerror(errno) + "; needs root or CAP_SYS_ADMIN)";
    }
    ~ScratchMount() {
        if (m_mounted) ::umount2(m_dir.path().c_str(), MNT_DETACH);
    }
    ScratchMount(const ScratchMount&) = delete;
    ScratchMount& operator=(const ScratchMount&) = delete;

    bool ok() const { return m_mounted; }
    const std::string& why() const { return m_why; }
    const std::filesystem::path& path() const { return m_dir.path(); }
    std::string operator/(const std::string& name) const { return (m_dir.path() / name).string(); }

    /// Bytes still free for files.
    uint64_t freeBytes() const {
        struct statvfs s;
        return ::statvfs(m_dir.path().c_str(), &s) == 0 ? uint64_t(s.f_bavail) * s.f_frsize : 0;
    }

private:
    TempDir m_dir;
    bool m_mounted = false;
    std::string m_why;
};

} // namespace hpcprof::test

// SPDX-License-Identifier: MIT
#include "hpcprof/schema/output_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h> // renameat2, RENAME_NOREPLACE
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace hpcprof::schema {

namespace fs = std::filesystem;

namespace {

std::string folderOf(const fs::path& output) {
    fs::path dir = output.parent_path();
    return dir.empty() ? std::string(".") : dir.string();
}

std::string cannotWrite(const fs::path& output, const std::string& reason) {
    return "cannot write " + output.string() + ": " + reason;
}

// Private folders still open, for the signal handler: plain arrays, filled before the folder
// can hold anything, read by removePendingOutputsForSignal() without allocating.
constexpr int kSlots = 4;
constexpr int kNamesPerSlot = 5; // the file, SQLite's -journal, -wal, -shm, then the folder
constexpr size_t kPathMax = 4096;
struct Slot {
    volatile sig_atomic_t used = 0;
    char paths[kNamesPerSlot][kPathMax] = {};
};
Slot g_slots[kSlots];

int registerSlot(const std::string& dir, const std::string& file) {
    if (file.size() + 16 >= kPathMax) return -1; // only the signal clean-up is lost
    for (int i = 0; i < kSlots; ++i) {
        if (g_slots[i].used) continue;
        const char* suffixes[] = {"", "-journal", "-wal", "-shm"};
        for (int k = 0; k < 4; ++k)
            std::snprintf(g_slots[i].paths[k], kPathMax, "%s%s", file.c_str(), suffixes[k]);
        std::snprintf(g_slots[i].paths[4], kPathMax, "%s", dir.c_str());
        g_slots[i].used = 1;
        return i;
    }
    return -1;
}

void releaseSlot(int slot) {
    if (slot >= 0) g_slots[slot].used = 0;
}

} // namespace

Status checkOutputPath(const fs::path& output, bool replace) {
    if (output.empty()) return Status::error("no output file given");
    std::string name = output.filename().string();
    if (name.empty() || name == "." || name == "..")
        return Status::error(cannotWrite(output, "it names a folder, not a file"));
    struct stat st{};
    if (::stat(output.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return Status::error(cannotWrite(output, "it is a folder (give a file name inside it)"));
    std::string dir = folderOf(output);
    struct stat dst{};
    if (::stat(dir.c_str(), &dst) != 0) {
        int err = errno;
        return Status::error(cannotWrite(output, err == ENOENT ? "folder " + dir + " does not exist"
                                                 : err == ENOTDIR
                                                     ? dir + " is not a folder"
                                                     : "cannot use folder " + dir + ": " +
                                                           std::strerror(err)));
    }
    if (!S_ISDIR(dst.st_mode)) return Status::error(cannotWrite(output, dir + " is not a folder"));
    if (::lstat(output.c_str(), &st) == 0) {
        if (!replace)
            return Status::error(output.string() + " already exists (use --force to replace it)");
        if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
            return Status::error(cannotWrite(output, "it exists and is not a regular file (a "
                                                     "device, FIFO or socket is never replaced)"));
    } else if (errno != ENOENT) {
        return Status::error(cannotWrite(output, std::strerror(errno)));
    }
    if (::access(dir.c_str(), W_OK | X_OK) != 0)
        return Status::error(cannotWrite(output, "cannot create files in " + dir + ": " +
                                                     std::strerror(errno)));
    return {};
}

Result<PendingOutput> PendingOutput::begin(const fs::path& output, bool replace) {
    HPCPROF_RETURN_IF_ERROR(checkOutputPath(output, replace));
    std::string name = output.filename().string();
    std::string dirTemplate = (fs::path(folderOf(output)) / ("." + name + ".tmp-XXXXXX")).string();
    if (!::mkdtemp(dirTemplate.data()))
        return Status::error(cannotWrite(output, "cannot create a temporary folder in " +
                                                     folderOf(output) + ": " + std::strerror(errno)));
    PendingOutput p;
    p.m_output = output;
    p.m_dir = dirTemplate;
    p.m_file = (fs::path(dirTemplate) / name).string();
    p.m_replace = replace;
    p.m_slot = registerSlot(p.m_dir, p.m_file);
    return p;
}

PendingOutput::PendingOutput(PendingOutput&& o) noexcept
    : m_output(std::move(o.m_output)), m_dir(std::exchange(o.m_dir, {})),
      m_file(std::exchange(o.m_file, {})), m_replace(o.m_replace),
      m_slot(std::exchange(o.m_slot, -1)) {}

PendingOutput& PendingOutput::operator=(PendingOutput&& o) noexcept {
    if (this != &o) {
        abandon();
        m_output = std::move(o.m_output);
        m_dir = std::exchange(o.m_dir, {});
        m_file = std::exchange(o.m_file, {});
        m_replace = o.m_replace;
        m_slot = std::exchange(o.m_slot, -1);
    }
    return *this;
}

PendingOutput::~PendingOutput() { abandon(); }

void PendingOutput::abandon() {
    if (m_dir.empty()) return;
    std::error_code ec;
    fs::remove_all(m_dir, ec); // our own 0700 folder: nothing in it belongs to anyone else
    releaseSlot(m_slot);
    m_slot = -1;
    m_dir.clear();
}

Status PendingOutput::commit() {
    if (m_dir.empty()) return Status::error("internal error: output already committed");
    int rc;
    if (m_replace) {
        // rename() replaces a file or a link itself, never what a link points at.
        rc = ::rename(m_file.c_str(), m_output.c_str());
    } else {
        rc = ::renameat2(AT_FDCWD, m_file.c_str(), AT_FDCWD, m_output.c_str(), RENAME_NOREPLACE);
        if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) {
            // A file system without RENAME_NOREPLACE: link() refuses an existing name as well.
            rc = ::link(m_file.c_str(), m_output.c_str());
            if (rc == 0) ::unlink(m_file.c_str());
        }
    }
    if (rc != 0) {
        int err = errno;
        abandon();
        return Status::error(err == EEXIST ? m_output.string() +
                                                 " appeared while it was being written (use "
                                                 "--force to replace it)"
                                           : "cannot move the finished file into place at " +
                                                 m_output.string() + ": " + std::strerror(err));
    }
    abandon();
    return {};
}

void removePendingOutputsForSignal() {
    for (auto& slot : g_slots) {
        if (!slot.used) continue;
        for (int k = 0; k < 4; ++k) ::unlink(slot.paths[k]);
        ::rmdir(slot.paths[4]);
    }
}

} // namespace hpcprof::schema

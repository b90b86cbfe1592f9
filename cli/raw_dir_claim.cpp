// SPDX-License-Identifier: MIT
#include "raw_dir_claim.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h> // renameat2, RENAME_NOREPLACE
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "hpcprof/schema/file_io.hpp"

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {

// In a folder of its own: tools and scripts that walk a raw folder's subfolders for thread
// files pass over it, as they pass over the per-rank layout's job folder.
constexpr const char* kLockFolder = ".hpcprof-run";
constexpr const char* kLockName = ".hpcprof-run/lock";

std::string hostName() {
    char host[256] = {};
    if (gethostname(host, sizeof(host) - 1) != 0) return "?";
    return host;
}

std::string nowText() {
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char text[32];
    std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
    return text;
}

/// Writes the whole owner file (the lock file's content) at offset 0.
bool writeOwner(int fd, const std::string& text) {
    return ftruncate(fd, 0) == 0 && schema::fileio::pwriteAll(fd, text.data(), text.size(), 0);
}

std::map<std::string, std::string> readOwner(int fd) {
    std::string text;
    char buf[4096];
    for (off_t at = 0;;) {
        ssize_t n = pread(fd, buf, sizeof(buf), at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || text.size() > 65536) break;
        text.append(buf, size_t(n));
        at += n;
    }
    std::map<std::string, std::string> fields;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(pos, end - pos);
        if (auto eq = line.find('='); eq != std::string::npos)
            fields[line.substr(0, eq)] = line.substr(eq + 1);
        pos = end + 1;
    }
    return fields;
}

std::string describeOwner(const std::map<std::string, std::string>& owner) {
    auto get = [&](const char* key) {
        auto it = owner.find(key);
        return it == owner.end() || it->second.empty() ? std::string("?") : it->second;
    };
    return fmt::format("pid {} on {}, started {}", get("pid"), get("host"), get("started"));
}

/// flock() errors of a file system without locks (some network and FUSE file systems): there,
/// a run goes ahead without the guarantee, and says so.
bool locksUnsupported(int err) {
    return err == ENOLCK || err == EOPNOTSUPP || err == EINVAL || err == ENOSYS;
}

/// rename() that never replaces: RENAME_NOREPLACE, or plain rename() where the file system
/// lacks it (a raw folder is never empty, and rename() does not replace a non-empty folder).
int renameNoReplace(const std::string& from, const std::string& to) {
    int rc = ::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE);
    if (rc != 0 && (errno == EINVAL || errno == ENOSYS)) rc = ::rename(from.c_str(), to.c_str());
    return rc;
}

/// Whether `root`'s lock file is still the file `fd` has open (nobody moved the folder away).
bool stillAt(const fs::path& root, int fd) {
    struct stat a{}, b{};
    return fstat(fd, &a) == 0 && a.st_nlink > 0 && lstat((root / kLockName).c_str(), &b) == 0 &&
           a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

bool folderIsEmpty(int dirFd) {
    int dup = fcntl(dirFd, F_DUPFD_CLOEXEC, 0);
    DIR* d = dup >= 0 ? fdopendir(dup) : nullptr;
    if (!d) {
        if (dup >= 0) close(dup);
        return false;
    }
    bool empty = true;
    while (dirent* e = readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) empty = false;
    closedir(d);
    return empty;
}

mode_t currentUmask() {
    mode_t m = umask(0);
    umask(m);
    return m;
}

struct Fd {
    int fd = -1;
    explicit Fd(int f = -1) : fd(f) {}
    ~Fd() {
        if (fd >= 0) close(fd);
    }
    int release() { return std::exchange(fd, -1); }
};

/// Makes the folder complete under a temporary name, then renames it into place. Returns the
/// locked descriptor, -1 with errno EEXIST when `root` exists, or -1 with another errno.
int createComplete(const ClaimRequest& r, const std::string& owner, bool shared, std::string& why,
                   bool& unlocked) {
    std::string tmp = r.root.string() + ".new-XXXXXX";
    if (!mkdtemp(tmp.data())) {
        why = std::strerror(errno);
        return -1;
    }
    // mkdtemp makes 0700; the agent's processes only need the owner, but other tools (and
    // users) expect the permissions a plain mkdir would give.
    ::chmod(tmp.c_str(), 0777 & ~currentUmask());
    std::string lockPath = tmp + "/" + kLockName;
    bool made = ::mkdir((tmp + "/" + kLockFolder).c_str(), 0777) == 0;
    Fd fd(made ? ::open(lockPath.c_str(), O_CREAT | O_EXCL | O_RDWR | O_NOFOLLOW | O_CLOEXEC, 0644)
               : -1);
    bool ok = fd.fd >= 0 && writeOwner(fd.fd, owner + "state=running\n");
    if (ok && flock(fd.fd, shared ? LOCK_SH : LOCK_EX) != 0) {
        unlocked = locksUnsupported(errno);
        ok = unlocked;
    }
    if (ok && !r.jobId.empty()) ok = ::mkdir((tmp + "/" + r.jobId).c_str(), 0777) == 0;
    int err = errno;
    if (ok && renameNoReplace(tmp, r.root.string()) == 0) return fd.release();
    if (ok) err = errno;
    std::error_code ec;
    fs::remove_all(tmp, ec);
    why = std::strerror(err);
    errno = (err == ENOTEMPTY) ? EEXIST : err;
    return -1;
}

ClaimResult refuse(ClaimOutcome outcome, std::string message) {
    ClaimResult r;
    r.outcome = outcome;
    r.message = std::move(message);
    return r;
}

ClaimResult claimed(int lockFd, const ClaimRequest& r, const std::string& owner, std::string note) {
    ClaimResult ok;
    ok.outcome = ClaimOutcome::Claimed;
    ok.note = std::move(note);
    ok.claim = RawDirClaim(lockFd, r.root, owner);
    return ok;
}

// ---- Who claims: the owner file ----

/// The owner file's text without its state line: this run (or, in the per-rank form, this job),
/// and the folder to merge.
std::string ownerText(const ClaimRequest& r) {
    const bool shared = !r.jobId.empty();
    const std::string myJob = shared ? r.jobId
                                     : fmt::format("run-{}-{}-{}", hostName(), getpid(),
                                                   std::chrono::steady_clock::now()
                                                       .time_since_epoch()
                                                       .count());
    std::string command = r.command.substr(0, 500);
    std::replace(command.begin(), command.end(), '\n', ' '); // one line per field
    return fmt::format("job={}\npid={}\nhost={}\nstarted={}\nrawdir={}\n"
                       "command={}\n",
                       myJob, getpid(), hostName(), nowText(),
                       (shared ? r.root / r.jobId : r.root).string(), command);
}

// ---- An existing folder: whose is it? ----

using OwnerFields = std::map<std::string, std::string>;

/// What a look at an existing folder's lock file came to.
enum class Look {
    Decided, ///< claimed (joined) or refused
    Again,   ///< changing under our eyes: look again
    Stale,   ///< raw data no run is using
};

/// Refuses a folder that cannot be opened (errno from open()); nothing when it was moved away
/// meanwhile (look again).
std::optional<ClaimResult> refuseUnopenable(const ClaimRequest& r) {
    int err = errno;
    if (err == ENOENT) return std::nullopt;
    if (err == ELOOP || err == ENOTDIR)
        return refuse(ClaimOutcome::Foreign,
                      fmt::format("{} exists and is not a folder (a file or a symbolic "
                                  "link hpcprof did not make): remove it or choose "
                                  "another -o",
                                  r.root.string()));
    return refuse(ClaimOutcome::Failed,
                  fmt::format("cannot open {}: {}", r.root.string(), std::strerror(err)));
}

/// Another user's folder is never used or deleted.
std::optional<ClaimResult> refuseOtherUsers(const ClaimRequest& r, int dirFd) {
    struct stat st{};
    if (fstat(dirFd, &st) == 0 && st.st_uid != geteuid())
        return refuse(ClaimOutcome::Foreign,
                      fmt::format("{} belongs to another user (uid {}): hpcprof neither "
                                  "uses nor deletes it; choose another -o",
                                  r.root.string(), st.st_uid));
    return std::nullopt;
}

/// The lock file is there: joins the folder another wrapper of this job made, waits while a run
/// holds the lock (InUse on the last attempt), or finds it stale. `found`: the owner fields.
Look examineLock(const ClaimRequest& r, const std::string& owner, Fd& lock, OwnerFields& found,
                 bool lastAttempt, ClaimResult& decided) {
    if (!r.jobId.empty() && found["job"] == r.jobId) {
        // Another wrapper of this job made it: join, unless someone is deleting it.
        if (flock(lock.fd, LOCK_SH | LOCK_NB) != 0 && !locksUnsupported(errno)) return Look::Again;
        if (!stillAt(r.root, lock.fd)) return Look::Again;
        decided = claimed(lock.release(), r, owner, std::string());
        return Look::Decided;
    }
    if (flock(lock.fd, LOCK_EX | LOCK_NB) != 0) {
        if (locksUnsupported(errno)) {
            found["state"] = "unknown"; // cannot tell: handled as stale, --force decides
        } else if (!lastAttempt) {
            return Look::Again;
        } else {
            decided = refuse(ClaimOutcome::InUse,
                             fmt::format("{} is being written by another hpcprof run ({}): "
                                         "wait for it to finish, or choose another -o",
                                         r.output.string(), describeOwner(found)));
            return Look::Decided;
        }
    }
    return stillAt(r.root, lock.fd) ? Look::Stale : Look::Again;
}

// ---- Stale raw data ----

/// What a stale folder holds, from its owner file's state (no lock file: not hpcprof run's).
std::string describeStale(const ClaimRequest& r, bool hasLock, const OwnerFields& found) {
    std::string state = found.count("state") ? found.at("state") : "";
    return !hasLock ? fmt::format("{} holds raw data hpcprof run did not leave (no {})",
                                  r.root.string(), kLockName)
           : state == "kept"
               ? fmt::format("{} holds raw data an earlier run kept (--keep-raw; {})",
                             r.root.string(), describeOwner(found))
           : state == "unknown"
               ? fmt::format("{} holds raw data of a run that may still be writing it (this "
                             "file system has no file locks; {})",
                             r.root.string(), describeOwner(found))
           : state == "unconverted"
               ? fmt::format("{} holds raw data of an earlier run whose trace could not be "
                             "written ({})",
                             r.root.string(), describeOwner(found))
               : fmt::format("{} holds raw data of an earlier run that did not finish (killed? "
                             "{})",
                             r.root.string(), describeOwner(found));
}

/// Stale: raw data that no run is using. Never deleted without --force (refused, saying how to
/// merge it). With --force it is moved aside and deleted; nothing returned then, and `note`
/// says what was deleted.
std::optional<ClaimResult> deleteStale(const ClaimRequest& r, bool hasLock,
                                       const OwnerFields& found, std::string& note) {
    std::string what = describeStale(r, hasLock, found);
    if (!r.force) {
        std::string merge = found.count("rawdir") ? found.at("rawdir") : r.root.string();
        return refuse(ClaimOutcome::Stale,
                      fmt::format("{}: convert it with 'hpcprof merge {} -o {}', or pass "
                                  "--force to delete it",
                                  what, merge, r.output.string()));
    }
    // Move it aside first (atomically: whoever looks next finds the path free), then
    // delete it at leisure.
    std::string aside = r.root.string() + ".old-XXXXXX";
    if (!mkdtemp(aside.data()) || ::rename(r.root.c_str(), aside.c_str()) != 0) {
        int err = errno;
        std::error_code ec;
        fs::remove(aside, ec);
        return refuse(ClaimOutcome::Failed,
                      fmt::format("{}; cannot delete it: {}", what, std::strerror(err)));
    }
    std::error_code ec;
    fs::remove_all(aside, ec);
    note = what + "; deleted it (--force)";
    return std::nullopt;
}

// ---- One attempt ----

/// The folder exists: joins it, refuses it, or deletes stale data (--force). Nothing returned:
/// try again.
std::optional<ClaimResult> claimExisting(const ClaimRequest& r, const std::string& owner,
                                         bool lastAttempt, std::string& note) {
    Fd dir(::open(r.root.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.fd < 0) return refuseUnopenable(r);
    if (auto foreign = refuseOtherUsers(r, dir.fd)) return foreign;
    // Held open (and locked, when stale) until the folder has been moved aside.
    Fd lock(::openat(dir.fd, kLockName, O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    OwnerFields found;
    if (lock.fd < 0) {
        if (errno != ENOENT)
            return refuse(ClaimOutcome::Failed,
                          fmt::format("cannot open {}/{}: {}", r.root.string(), kLockName,
                                      std::strerror(errno)));
        // No lock file: an empty folder holds nothing (rmdir removes only an empty one);
        // anything else is raw data of an agent used by hand or of an older hpcprof.
        if (folderIsEmpty(dir.fd) && ::rmdir(r.root.c_str()) == 0) return std::nullopt;
    } else {
        found = readOwner(lock.fd);
        ClaimResult decided;
        switch (examineLock(r, owner, lock, found, lastAttempt, decided)) {
        case Look::Decided: return decided;
        case Look::Again: return std::nullopt;
        case Look::Stale: break;
        }
    }
    return deleteStale(r, lock.fd >= 0, found, note);
}

/// Makes the folder, or deals with the one that exists. Nothing returned: try again (`note`
/// keeps what a deleted stale folder held, for the claim that follows).
std::optional<ClaimResult> claimOnce(const ClaimRequest& r, const std::string& owner,
                                     bool lastAttempt, std::string& note) {
    std::string why;
    bool unlocked = false;
    int fd = createComplete(r, owner, !r.jobId.empty(), why, unlocked);
    if (fd >= 0)
        return claimed(fd, r, owner,
                       unlocked ? fmt::format("the file system of {} has no file locks: another "
                                              "run with the same output would not be noticed",
                                              r.root.string())
                                : note);
    if (errno != EEXIST)
        return refuse(ClaimOutcome::Failed,
                      fmt::format("cannot create the raw folder {}: {}", r.root.string(), why));
    return claimExisting(r, owner, lastAttempt, note);
}

} // namespace

RawDirClaim::RawDirClaim(RawDirClaim&& o) noexcept
    : m_fd(std::exchange(o.m_fd, -1)), m_root(std::move(o.m_root)), m_owner(std::move(o.m_owner)) {}

RawDirClaim& RawDirClaim::operator=(RawDirClaim&& o) noexcept {
    if (this != &o) {
        if (m_fd >= 0) close(m_fd);
        m_fd = std::exchange(o.m_fd, -1);
        m_root = std::move(o.m_root);
        m_owner = std::move(o.m_owner);
    }
    return *this;
}

RawDirClaim::~RawDirClaim() {
    if (m_fd >= 0) close(m_fd);
}

void RawDirClaim::setState(const std::string& state) {
    if (m_fd >= 0) writeOwner(m_fd, m_owner + "state=" + state + "\n");
}

void RawDirClaim::removeFolder() {
    if (m_fd < 0) return;
    std::error_code ec;
    // Still holding the lock: nobody else deletes or joins the folder meanwhile.
    if (stillAt(m_root, m_fd)) fs::remove_all(m_root, ec);
    close(m_fd);
    m_fd = -1;
}

ClaimResult claimRawDir(const ClaimRequest& r) {
    const std::string owner = ownerText(r);
    std::string note;
    // A folder another wrapper or run is moving aside (--force on stale data) looks busy for a
    // moment: only a lock held for a whole second counts as in use.
    constexpr int kAttempts = 20;
    for (int attempt = 0; attempt < kAttempts; ++attempt) {
        if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (std::optional<ClaimResult> done = claimOnce(r, owner, attempt + 1 == kAttempts, note))
            return std::move(*done);
    }
    return refuse(ClaimOutcome::Failed,
                  fmt::format("{} keeps changing (another hpcprof run is starting with the same "
                              "output?): choose another -o",
                              r.root.string()));
}

MergeGuard guardRawDirForMerge(const fs::path& given) {
    MergeGuard g;
    fs::path rawDir = given.lexically_normal();
    if (rawDir.filename().empty()) rawDir = rawDir.parent_path(); // "T.raw/job/"
    for (const fs::path& root : {rawDir, rawDir.parent_path()}) {
        int fd = ::open((root / kLockName).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        if (flock(fd, LOCK_EX | LOCK_NB) != 0 && !locksUnsupported(errno)) {
            g.refusal = fmt::format("{} is still being written by a running hpcprof run ({}): "
                                    "wait for it to finish",
                                    rawDir.string(), describeOwner(readOwner(fd)));
            close(fd);
            return g;
        }
        auto fields = readOwner(fd);
        std::string text;
        for (const char* key : {"job", "pid", "host", "started", "rawdir", "command"})
            if (fields.count(key)) text += std::string(key) + "=" + fields[key] + "\n";
        g.claim = RawDirClaim(fd, root, text);
        return g;
    }
    return g;
}

std::string outputBeingWritten(const fs::path& output) {
    // <output>.raw, or <output>.shards for a per-rank job on several nodes (node_capture.hpp).
    for (const char* folder : {".raw/", ".shards/"}) {
        Fd fd(::open((output.string() + folder + kLockName).c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC));
        // Exclusive, so that the shared locks of a per-rank job count as well; released at once.
        if (fd.fd < 0 || flock(fd.fd, LOCK_EX | LOCK_NB) == 0 || errno != EWOULDBLOCK) continue;
        return fmt::format("{} is being written by a running hpcprof run ({}): wait for it to "
                           "finish, or choose another -o",
                           output.string(), describeOwner(readOwner(fd.fd)));
    }
    return {};
}

} // namespace hpcprof::cli

// SPDX-License-Identifier: MIT
// Who owns a trace's raw folder (<output>.raw). A run claims it before its command starts and
// holds the claim until the trace is written, so a second run with the same output refuses
// before running anything, and raw data left by a killed run is never deleted silently.
//
// The claim is a flock on <output>.raw/.hpcprof-run/lock, a small text file naming the owner
// (job id, pid, host, start time, the folder to merge, state). A raw folder only ever appears
// complete: it is made under a temporary name beside its final one (mkdtemp), its lock file is
// written and locked inside, and then it is renamed into place with RENAME_NOREPLACE. So an existing
// <output>.raw always holds its lock file (or hpcprof run did not make it), and whoever finds
// the lock free knows that no run is using the folder.
//
//   whole-job form  (hpcprof run -- mpirun ...):   one wrapper, exclusive lock
//   per-rank form   (mpirun ... hpcprof run ...):  every wrapper of the job takes a shared lock
//                    on the folder its job made (same job id); a wrapper of another job finds
//                    it locked and refuses, as a second whole-job run does.
//
// Folder found        | lock held by a live run | lock free (stale)
// --------------------|-------------------------|--------------------------------------------
// without --force     | refused: in use         | refused: says how to merge it, or --force
// with --force        | refused: in use         | moved aside and deleted, with a note
#pragma once

#include <filesystem>
#include <string>
#include <utility>

namespace hpcprof::cli {

enum class ClaimOutcome {
    Claimed,
    InUse,   ///< another run (or job) holds the folder: never overridden
    Stale,   ///< raw data no run is using; --force deletes it
    Foreign, ///< not a folder hpcprof made, or another user's: never touched
    Failed,  ///< a system call failed (message has the reason)
};

struct ClaimRequest {
    std::filesystem::path root;  ///< <output>.raw
    std::filesystem::path output;
    std::string jobId;           ///< per-rank form: the launcher's job id; else empty
    bool force = false;          ///< delete a stale folder
    std::string command;         ///< for the owner file
};

/// A held claim; the destructor releases the lock (the folder stays unless finish() removed it).
class RawDirClaim {
public:
    RawDirClaim() = default;
    /// Takes over a locked lock file descriptor of `root` (`owner`: its text without state).
    RawDirClaim(int lockFd, std::filesystem::path root, std::string owner)
        : m_fd(lockFd), m_root(std::move(root)), m_owner(std::move(owner)) {}
    RawDirClaim(RawDirClaim&& o) noexcept;
    RawDirClaim& operator=(RawDirClaim&& o) noexcept;
    RawDirClaim(const RawDirClaim&) = delete;
    RawDirClaim& operator=(const RawDirClaim&) = delete;
    ~RawDirClaim();

    bool held() const { return m_fd >= 0; }
    const std::filesystem::path& root() const { return m_root; }

    /// Records what becomes of the raw data ("kept": --keep-raw, "unconverted": the trace could
    /// not be written), for the message the next run with this output gives.
    void setState(const std::string& state);

    /// Deletes the whole raw folder (the trace is written), then releases the claim.
    void removeFolder();

private:
    int m_fd = -1;
    std::filesystem::path m_root;
    std::string m_owner; ///< the owner file's text without its state line
};

struct ClaimResult {
    ClaimOutcome outcome = ClaimOutcome::Failed;
    std::string message; ///< why it was refused (one line, no "hpcprof run: " prefix)
    std::string note;    ///< for a deleted stale folder: what was deleted
    RawDirClaim claim;
};

ClaimResult claimRawDir(const ClaimRequest& request);

/// For `hpcprof merge RAWDIR`: holds the lock of the run that made RAWDIR (its
/// .hpcprof-run/lock, or its parent's in the per-rank layout) while merging. Refused (message set) while that run
/// is still writing.
struct MergeGuard {
    RawDirClaim claim;
    std::string refusal;
};
MergeGuard guardRawDirForMerge(const std::filesystem::path& rawDir);

/// For merge, import and export: the refusal (empty if none) when a running hpcprof run is
/// writing `output` (it holds the lock of <output>.raw), so that they never race it for the
/// same file. Only for an output whose raw folder this process has not locked itself.
std::string outputBeingWritten(const std::filesystem::path& output);

} // namespace hpcprof::cli

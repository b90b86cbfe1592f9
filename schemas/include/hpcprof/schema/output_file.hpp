// SPDX-License-Identifier: MIT
// How every command that writes an output file (run, merge, import, export, report -o, diff -o)
// checks it before any work and writes it without ever exposing a half-written or foreign file.
//
// An output is written into a private folder created next to it (mkdtemp: mode 0700, a name
// nobody can predict or pre-create, in the output's own folder so the final rename stays on one
// file system). Nobody else can create, replace or link anything in that folder, so no
// symbolic link planted in a shared folder can redirect the write. The finished file is renamed
// into place, and the private folder is removed on every path: success, failure (disk full
// included) and, in the CLI, SIGINT/SIGTERM/SIGHUP (removePendingOutputsForSignal()).
//
//   out/                       out/.trace.hpcprof.tmp-Xa81Qz/   (0700, ours)
//     trace.hpcprof   <-rename--   trace.hpcprof   (+ SQLite's -journal while it is open)
#pragma once

#include <filesystem>
#include <string>

#include "hpcprof/status.hpp"

namespace hpcprof::schema {

/// Checks, before any work, that `output` can be written: its folder exists, is a folder and
/// lets this user create files in it; `output` is not a folder and exists only with `replace`
/// (and then only as a file or a link, never a device or FIFO). The message gives the reason.
Status checkOutputPath(const std::filesystem::path& output, bool replace);

/// An output file being written (see the file comment). Move-only; the destructor abandons
/// whatever was not committed.
class PendingOutput {
public:
    /// Runs checkOutputPath and creates the private folder.
    static Result<PendingOutput> begin(const std::filesystem::path& output, bool replace);

    PendingOutput(PendingOutput&& other) noexcept;
    PendingOutput& operator=(PendingOutput&& other) noexcept;
    PendingOutput(const PendingOutput&) = delete;
    PendingOutput& operator=(const PendingOutput&) = delete;
    ~PendingOutput();

    /// The file to write (inside the private folder; it does not exist yet).
    const std::string& path() const { return m_file; }

    /// Moves the finished file to the output and removes the private folder. Without `replace`
    /// an output that appeared meanwhile is not replaced (an error instead).
    Status commit();

    /// Removes the private folder and everything in it (also done by the destructor).
    void abandon();

private:
    PendingOutput() = default;
    std::filesystem::path m_output;
    std::string m_dir;
    std::string m_file;
    bool m_replace = false;
    int m_slot = -1; ///< index in the signal-cleanup table, -1 = none
};

/// Removes every private folder of a PendingOutput still open in this process. Only
/// async-signal-safe calls: for a signal handler that then re-raises the signal.
void removePendingOutputsForSignal();

} // namespace hpcprof::schema

// SPDX-License-Identifier: MIT
// The packed forms of a trace (`hpcprof pack`, docs/trace-schema.md "Packed traces"): columnar
// (the default: the trace without its events as one zstd frame, then each event column
// delta-coded and compressed on its own) or whole (the plain SQLite file as one zstd frame: a
// standard .zst file, `zstd -d` gives it back). Readers open either transparently: it is unpacked into a private
// temporary file (TMPDIR/hpcprof-unpacked-XXXXXX, mode 0600), removed when the last holder lets
// go; opens of the same file while one copy is in use share that copy.
#pragma once

#include <memory>
#include <string>

#include "hpcprof/status.hpp"

namespace hpcprof::schema {

/// Whether `path` starts like a packed trace (the zstd frame magic).
bool isPackedTrace(const std::string& path);

/// A packed trace's unpacked copy: a temporary file, removed with this object.
class UnpackedTrace {
public:
    UnpackedTrace(int fd, std::string path);
    ~UnpackedTrace();
    UnpackedTrace(const UnpackedTrace&) = delete;
    UnpackedTrace& operator=(const UnpackedTrace&) = delete;
    /// The copy's path, for SQLite to open.
    const std::string& path() const { return m_path; }

private:
    int m_fd;
    std::string m_path;
};

/// For a packed trace, its unpacked copy (shared while one is held); for any other file, null.
/// A damaged or truncated packed file gives a clear error, never a partial copy.
Result<std::shared_ptr<const UnpackedTrace>> unpackIfPacked(const std::string& path);

enum class PackForm { Columns, Whole };

/// Writes the packed form of the plain trace file `in` to `out` (a new file), at zstd `level`
/// with `threads` compression threads (0: the calling one). The columnar form falls back to the
/// whole form for a trace whose events hold a value that is not an integer; the form written is
/// returned.
Result<PackForm> packTraceFile(const std::string& in, const std::string& out, int level, int threads,
                               PackForm form = PackForm::Columns);

} // namespace hpcprof::schema

// SPDX-License-Identifier: MIT
// Temporary files of pack and unpack, always in $TMPDIR (else /tmp): users point TMPDIR at a
// scratch file system when a trace is big, and std::tmpfile() would ignore it.
#pragma once

#include <cstdio>
#include <string>

namespace hpcprof::schema::tempfile {

/// Where the temporary files go: $TMPDIR, else /tmp.
std::string directory();

/// What a failure to create or write a temporary file (errno `err`) says: the directory and why,
/// e.g. "temporary file in /scratch (TMPDIR): No space left on device".
std::string failure(int err);

/// A new file only this user may read, named `prefix`-XXXXXX in TMPDIR; its name in `path`;
/// the descriptor (close-on-exec), or -1 with errno set.
int named(const char* prefix, std::string& path);

/// A new file in TMPDIR with no name (removed when closed), open for reading and writing;
/// nullptr with errno set.
std::FILE* anonymous();

} // namespace hpcprof::schema::tempfile

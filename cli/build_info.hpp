// SPDX-License-Identifier: MIT
// The build `hpcprof --version` describes: version, git commit, the optional sources compiled in.
#pragma once

#include <string>
#include <vector>

namespace hpcprof::cli {

/// An optional dependency and whether this build has it (CMake's HPCPROF_HAVE_<NAME>).
struct BuiltSource {
    const char* name;
    bool built;
};

/// The commit the build was made from ("abc123def456", "...-dirty", or "unknown").
const char* gitCommit();
/// Every optional source, in a fixed order: MPI, CUPTI, NVTX, NCCL, PAPI, ibverbs, OMPT, Qt.
std::vector<BuiltSource> builtSources();
/// The text of `hpcprof --version`: "hpcprof VERSION", then the commit, then the sources
/// built with and without.
std::string versionText();

} // namespace hpcprof::cli

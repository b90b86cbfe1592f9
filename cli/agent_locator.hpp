// SPDX-License-Identifier: MIT
// Finds libhpcprof.so next to the hpcprof executable (build tree and install tree alike).
#pragma once

#include <string>

namespace hpcprof::cli {

/// Absolute path of the agent library, or empty if it cannot be found. HPCPROF_AGENT overrides.
std::string locateAgent();

/// Absolute path of a sibling executable of hpcprof (e.g. hpcprof-gui), or empty.
std::string locateSiblingExecutable(const std::string& name);

} // namespace hpcprof::cli

// SPDX-License-Identifier: MIT
#include <string>

#include "build_info.hpp"
#include "hpcprof/config.hpp"

namespace hpcprof::cli {

std::string versionText() {
    std::string with, without;
    for (const BuiltSource& s : builtSources()) {
        std::string& list = s.built ? with : without;
        list += list.empty() ? s.name : std::string(", ") + s.name;
    }
    // The first line is "NAME VERSION" alone: help2man and scripts read the version from it.
    return std::string("hpcprof ") + HPCPROF_VERSION + "\ncommit " + gitCommit() +
           "\nbuilt with: " + (with.empty() ? "-" : with) +
           "\nbuilt without: " + (without.empty() ? "-" : without);
}

} // namespace hpcprof::cli

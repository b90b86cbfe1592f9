// SPDX-License-Identifier: MIT
#include "agent_locator.hpp"

#include <cstdlib>
#include <filesystem>

namespace hpcprof::cli {

namespace fs = std::filesystem;

namespace {
fs::path selfDir() {
    std::error_code ec;
    fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::path() : exe.parent_path();
}
} // namespace

std::string locateAgent() {
    if (const char* env = std::getenv("HPCPROF_AGENT"); env && *env) return fs::absolute(env);
    fs::path dir = selfDir();
    for (const fs::path& candidate :
         {dir / "../lib/libhpcprof.so", dir / "libhpcprof.so", dir / "../lib64/libhpcprof.so"}) {
        std::error_code ec;
        if (fs::exists(candidate, ec)) return fs::weakly_canonical(candidate, ec).string();
    }
    return {};
}

std::string locateSiblingExecutable(const std::string& name) {
    std::error_code ec;
    fs::path candidate = selfDir() / name;
    return fs::exists(candidate, ec) ? candidate.string() : std::string();
}

} // namespace hpcprof::cli

// SPDX-License-Identifier: MIT
#include "file_class.hpp"

#include <array>
#include <string>

#include "hpcprof/schema/object_kind.hpp"

namespace hpcprof::analyzer {

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

/// Folders whose files belong to the system, not to a run: read by the loader, the C library,
/// MPI, PMIx, hwloc, CUDA, Python at start-up.
constexpr std::array kSystemFolders = {"/etc/", "/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/",
                                       "/run/", "/var/run/", "/var/lib/", "/var/cache/"};

/// Path fragments of runtime state and configuration anywhere (home folders, /tmp, /opt).
constexpr std::array kRuntimeFragments = {
    "/site-packages/", "/dist-packages/", "/__pycache__/", // installed Python packages
    "/.openmpi/", "/.pmix/", "/.hwloc/", "/.nv/",          // per-user runtime configuration
    "/ompi.", "/prte.", "/pmix.", "/pmix_", "/openmpi-sessions-", // MPI/PMIx session folders
    "/.cache/"};

bool isSharedObject(std::string_view path) {
    size_t slash = path.rfind('/');
    std::string_view base = slash == std::string_view::npos ? path : path.substr(slash + 1);
    size_t so = base.find(".so");
    // "libfoo.so" or "libfoo.so.1.2", not "data.sorted".
    return so != std::string_view::npos && (so + 3 == base.size() || base[so + 3] == '.');
}

bool isRuntimeFile(std::string_view path) {
    for (std::string_view folder : kSystemFolders)
        if (startsWith(path, folder)) return true;
    if (startsWith(path, "/opt/") && contains(path, "/etc/")) return true;
    for (std::string_view fragment : kRuntimeFragments)
        if (contains(path, fragment)) return true;
    return isSharedObject(path) || path.ends_with(".pyc");
}


} // namespace

const char* fileClassName(FileClass c) {
    switch (c) {
    case FileClass::Data: return "data";
    case FileClass::Runtime: return "runtime";
    case FileClass::PseudoFs: return "pseudo_fs";
    case FileClass::Device: return "device";
    case FileClass::Ipc: return "ipc";
    case FileClass::Unknown: return "unknown";
    }
    return "unknown";
}

FileClass classifyFile(std::string_view path, std::string_view kind) {
    if (path.empty() || path == "(unknown)" || path == "(no file)") return FileClass::Unknown;
    // A folder is classed like the files in it ("/sys" like "/sys/..."); the root folder is
    // listed by the loader and the runtime, never a program's data.
    std::string asFolder(path);
    if (asFolder.back() != '/') asFolder += '/';
    if (asFolder == "/") return FileClass::Runtime;
    // The store's kind, or the same rule on the name for traces that lack it (imported, older).
    const std::string_view derived = schema::objectKindOf(asFolder);
    auto is = [&](std::string_view k) { return kind == k || derived == k; };
    if (is("pipe") || is("socket") || is("shm") || startsWith(path, "anon_inode:")) return FileClass::Ipc;
    if (is("procfs")) return FileClass::PseudoFs;
    if (is("device")) return FileClass::Device;
    if (isRuntimeFile(path) || isRuntimeFile(asFolder)) return FileClass::Runtime;
    return FileClass::Data;
}

} // namespace hpcprof::analyzer

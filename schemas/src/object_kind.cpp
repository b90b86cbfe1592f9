// SPDX-License-Identifier: MIT
#include "hpcprof/schema/object_kind.hpp"

namespace hpcprof::schema {

namespace {
bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
} // namespace

std::string_view objectKindOf(std::string_view name) {
    if (startsWith(name, "pipe:[")) return "pipe";
    if (startsWith(name, "socket:")) return "socket";
    if (startsWith(name, "anon_inode:")) return "other";
    if (startsWith(name, "/dev/shm/")) return "shm";
    if (startsWith(name, "/proc/") || startsWith(name, "/sys/")) return "procfs";
    if (startsWith(name, "/dev/")) return "device";
    if (startsWith(name, "/")) return "file";
    return "unknown";
}

} // namespace hpcprof::schema

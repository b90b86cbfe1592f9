// SPDX-License-Identifier: MIT
// The kind of an I/O object from its name (object.kind in the trace): the store writes it, the
// analyzer's file classes start from it (also for traces whose kind is missing or "unknown").
#pragma once

#include <string_view>

namespace hpcprof::schema {

/// "pipe:[..]" pipe, "socket:.." socket, "anon_inode:.." other, "/dev/shm/.." shm, "/proc/.." and
/// "/sys/.." procfs, other "/dev/.." device, other absolute paths file, anything else unknown.
std::string_view objectKindOf(std::string_view name);

} // namespace hpcprof::schema

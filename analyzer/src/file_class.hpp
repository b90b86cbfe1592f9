// SPDX-License-Identifier: MIT
// What a file an I/O call touched is to the program: its own data, or something the runtime,
// the kernel or another process put there. Start-up of an MPI library reads dozens of
// /sys/devices/.../config, /proc/cpuinfo and configuration files in small requests; those are
// not the program's I/O and must neither lead the top-files list nor fire the I/O rules.
#pragma once

#include <string_view>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

/// The class of an I/O object from its path and the kind the store gave it (object.kind:
/// file, pipe, socket, device, procfs, shm, directory, other, unknown). Rules, first match:
///   ipc        pipes, sockets, shared-memory segments (/dev/shm), anonymous inodes (eventfd...)
///   pseudo_fs  /proc, /sys
///   device     other /dev entries (terminals, /dev/null, GPU and NIC device files)
///   runtime    what libraries and the system read to start: /etc, /usr, /lib*, /opt/*/etc,
///              /run, /var/run, /var/lib, shared objects (*.so, *.so.N), Python's installed
///              packages and byte code, MPI/PMIx session and configuration folders
///   data       every other path: the program's own files
///   unknown    no path (a descriptor the agent saw no open for)
FileClass classifyFile(std::string_view path, std::string_view objectKind);

} // namespace hpcprof::analyzer

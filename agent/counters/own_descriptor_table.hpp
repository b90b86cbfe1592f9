// SPDX-License-Identifier: MIT
// A descriptor table of the calling thread's own, for the counter sampler thread: what it opens
// afterwards (perf_event groups, /proc files, PAPI's descriptors) takes none of the program's
// descriptor numbers, and the program can neither read, close nor replace it.
#pragma once

namespace hpcprof::agent::counters {

/// unshare(CLONE_FILES), then closes the copies of the program's descriptors in the new table
/// and puts /dev/null on 0-2. Closing the copies releases nothing of the program's: each file
/// stays open in the program's table, and POSIX locks belong to the table that took them.
/// False (errno set) when unshare is refused (some container seccomp profiles): the thread then
/// still shares the program's table. Call it once, on the thread that wants its own table.
bool takeOwnDescriptorTable();

} // namespace hpcprof::agent::counters

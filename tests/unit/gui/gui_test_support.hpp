// SPDX-License-Identifier: MIT
// Shared pieces of the GUI tests: a QApplication on the offscreen platform (created once), and a
// small known trace with one event of every class at fixed times.
#pragma once

#include <string>

namespace hpcprof::test {

/// Creates the QApplication (offscreen platform) the first time it is called.
void ensureGuiApp();

/// Writes the "classes" trace: 2 ranks over [0, 1 ms). Rank 0's main thread has an NVTX range
/// [0, 900 us) at depth 0 and, at depth 1: compute [100, 200) us, communication [300, 400) us
/// (MPI_Allreduce, seq 0), io [500, 600) us (read of /data/in.bin, 4096 bytes), sync
/// [700, 800) us; its GPU stream has memory [220, 280) us (HtoD copy) and a kernel [410, 450) us
/// with correlation id 7, launched by a cudaLaunchKernel at [402, 406) us on the main thread
/// (depth 1). Rank 1's main thread has its MPI_Allreduce (seq 0) at [350, 400) us, and 200
/// writes of 100 ns every 1 us from 600 us (too narrow to see at full zoom: they fold).
void writeClassesTrace(const std::string& path);

} // namespace hpcprof::test

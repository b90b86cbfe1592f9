// SPDX-License-Identifier: MIT
// The named thresholds the analyses and the advice rules share: one place for each number, so
// that the per-rank facts (rank_pass.cpp), the rules (advice/) and the rule reference
// (docs/advice-rules.md, generated from the rules) cannot disagree.
#pragma once

#include <cstdint>

namespace hpcprof::analyzer::threshold {

// --- Facts counted per rank (rank_pass.cpp, analyze.cpp) ---
/// A message, collective or I/O request moving fewer bytes than this is small.
inline constexpr int64_t kSmallRequestBytes = 64 * 1024;
/// A GPU kernel shorter than this is short (launch overhead dominates it).
inline constexpr int64_t kShortKernelNs = 10'000;
/// A gap between GPU activities shorter than this is a launch gap.
inline constexpr int64_t kShortGpuGapNs = 20'000;
/// A collective moving at least this many bytes is large (bandwidth-bound).
inline constexpr int64_t kLargeCollectiveBytes = 1024 * 1024;
/// The link bandwidth assumed when neither the user nor the trace gives one (100 Gb/s).
inline constexpr double kDefaultLinkBytesPerS = 12.5e9;
/// The copy bandwidth between two ranks on one host (shared memory, one copy through a buffer)
/// assumed when the user gives none: a conservative figure for one core's memcpy.
inline constexpr double kDefaultMemoryCopyBytesPerS = 10e9;

// --- Busy threads (counters.cpp): who wants a CPU ---
/// A thread wants a CPU when (on-CPU + run-queue wait) / wall >= this.
inline constexpr double kBusyDemand = 0.5;
/// Threads sampled for less than this are not classified (start-up helpers).
inline constexpr int64_t kMinBusySpanNs = 20'000'000;
/// ... nor threads sampled for less than this share of their process's longest-sampled thread:
/// a helper that lived through a twentieth of the run cannot oversubscribe a host, however
/// long it waited for a CPU on a loaded machine.
inline constexpr double kMinBusySpanShare = 0.25;
/// Without run-queue wait: preempted at least this often per second and more often than it
/// blocked also marks a thread as wanting the CPU.
inline constexpr double kBusyInvoluntaryPerS = 20.0;

// --- Severity of a finding from its gain relative to the runtime ---
inline constexpr double kCriticalGainShare = 0.20;
inline constexpr double kWarningGainShare = 0.05;

} // namespace hpcprof::analyzer::threshold

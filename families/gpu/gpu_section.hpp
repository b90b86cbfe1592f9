// SPDX-License-Identifier: MIT
// The gpu family's result (Analysis::sections["gpu"]): per rank, kernel statistics by name,
// launch latency and launch-queue depth, copy bandwidth by direction, and the time of the kernel
// classes with their overlaps. Definitions: docs/analysis.md, "Kernel statistics".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpcprof/analyzer/analysis_types.hpp"

namespace hpcprof::analyzer {

/// Launch latency of a set of kernels: the kernel's start minus the start of the CUDA API call
/// that launched it (same correlation id). Percentiles are nearest-rank over exact values.
struct LatencyStats {
    int64_t count = 0;
    double meanNs = 0;
    int64_t medianNs = 0, p95Ns = 0, maxNs = 0;
    int64_t negative = 0; ///< kernels that start before their call (clocks out of step)
};

/// The kernel classes: compute (kernels), communication (NCCL kernels), memory (copies, sets).
enum class KernelClass : uint8_t { Compute, Communication, Memory };
inline constexpr int kKernelClassCount = 3;
inline const char* kernelClassName(KernelClass c) {
    return c == KernelClass::Compute ? "compute" : c == KernelClass::Communication ? "communication" : "memory";
}

/// One kernel name on one rank.
struct KernelNameStats {
    std::string name; ///< full (demangled) name
    KernelClass cls = KernelClass::Compute;
    int64_t count = 0, totalNs = 0, minNs = 0, maxNs = 0;
    double meanNs = 0, stdNs = 0; ///< std: sample standard deviation (n - 1), 0 for one kernel
    LatencyStats launch;          ///< its kernels whose launch call is known
};

/// Copies or sets of one direction ("HtoD", "DtoH", "DtoD", "PtoP", ..., "memset").
struct CopyDirectionStats {
    std::string direction;
    int64_t count = 0, bytes = 0, durNs = 0;
    double gbPerS() const { return durNs > 0 ? double(bytes) / double(durNs) : 0.0; }
};

/// Kernels queued (launch call made, kernel not started) over the window.
struct QueueDepthStats {
    int64_t max = 0;
    double mean = 0;          ///< time-weighted over the window
    int64_t beginNs = 0;      ///< the series covers [beginNs, beginNs + bucketNs * size)
    int64_t bucketNs = 0;
    std::vector<double> meanSeries;  ///< time-weighted mean depth per bucket
    std::vector<int64_t> maxSeries;  ///< largest depth per bucket
};

struct ClassTime {
    int64_t count = 0;
    int64_t totalNs = 0; ///< sum of durations
    int64_t busyNs = 0;  ///< union of their intervals inside the window
};

struct GpuKernelRank {
    int64_t rank = 0;
    std::vector<KernelNameStats> kernels; ///< by total time, longest first (then by name)
    LatencyStats launch;
    int64_t unmatchedKernels = 0; ///< kernels in the window without a launch call in it
    QueueDepthStats queue;
    std::vector<CopyDirectionStats> copies; ///< by direction name
    ClassTime classes[kKernelClassCount];
    int64_t commComputeOverlapNs = 0;   ///< communication kernels run while compute kernels run
    int64_t memoryComputeOverlapNs = 0; ///< copies/sets run while compute kernels run
    int64_t commMemoryOverlapNs = 0;    ///< communication kernels run while copies/sets run
};

struct GpuSection final : FamilySection {
    static constexpr const char* kName = "gpu";
    std::vector<GpuKernelRank> ranks;       ///< ranks with GPU kernels or copies, by rank
    LatencyStats launch;                    ///< every rank's kernels together
    std::vector<CopyDirectionStats> copies; ///< every rank's copies together
};

/// The section of `a`, nullptr when the trace has no GPU kernels or copies.
inline const GpuSection* gpuSection(const Analysis& a) {
    auto it = a.sections.find(GpuSection::kName);
    return it == a.sections.end() ? nullptr : static_cast<const GpuSection*>(it->second.get());
}

} // namespace hpcprof::analyzer

// SPDX-License-Identifier: MIT
// Agent configuration, read once from environment variables the launcher sets.
//
//   HPCPROF_RAW_DIR           run's raw directory; without it the agent stays passive
//   HPCPROF_SOURCES           comma list of sources to record (io,mpi,...); default: all built in
//   HPCPROF_THREAD_BUFFER_MB  raw records kept per thread before dropping (default 1024)
//   HPCPROF_CHUNK_KB          file growth step per thread (default 1024)
//   HPCPROF_PROVISION_HELPER  0 = threads map their own chunks, no helper task (default 1)
//   HPCPROF_CLOCK             tsc | monotonic (default: tsc when invariant)
//   HPCPROF_TSC_HZ            TSC frequency measured by the launcher
//   HPCPROF_CLOCK_SKEW_NS     test knob: add this many ns to this process's clock readings
//   HPCPROF_RDMA_EVENT_RATE   RDMA work requests per second and QP kept as single events; the
//                             store folds the rest into per-QP time buckets (default 100000)
#pragma once

#include <cstddef>
#include <cstdint>

namespace hpcprof::collector {

enum class SourceBit : uint32_t {
    Io = 1u << 0,
    Mpi = 1u << 1,
    Socket = 1u << 2,
    Rdma = 1u << 3,       ///< verbs work requests and completions (interpose/ibverbs)
    Cuda = 1u << 8,       ///< CUPTI activity (CUDA_INJECTION64_PATH)
    Nvtx = 1u << 9,       ///< NVTX ranges (NVTX_INJECTION64_PATH)
    Nccl = 1u << 10,      ///< NCCL API calls (LD_PRELOAD)
    NcclPlugin = 1u << 11, ///< NCCL profiler plugin (NCCL_PROFILER_PLUGIN; only when named)
    OpenMp = 1u << 12,    ///< OpenMP regions, loops and waits through OMPT (interpose/openmp)
    Counters = 1u << 16   ///< CPU counters (collector/counters; HPCPROF_COUNTERS)
};

struct Config {
    char rawDir[1024] = {};
    bool enabled = false;
    uint32_t sources = ~0u;
    uint64_t threadBufferBytes = 1024ull << 20;
    uint64_t chunkBytes = 1024ull << 10;
    bool provisionHelper = true;
    uint64_t tscHz = 0;
    int64_t clockSkewNs = 0;
    const char* clockRequest = nullptr;
    uint32_t rdmaEventRate = 100000;
};

/// Parses the environment (allocation-free). Unknown source names are ignored here; the launcher
/// validates --sources before it starts anything.
Config readConfig();

/// Parses a comma-separated source list ("io,mpi"); returns 0 for an empty/unknown-only list.
uint32_t parseSources(const char* list);

} // namespace hpcprof::collector

// SPDX-License-Identifier: MIT
#include "config.hpp"

#include <cstdlib>
#include <cstring>

namespace hpcprof::collector {

namespace {
uint64_t envU64(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    char* end = nullptr;
    unsigned long long x = std::strtoull(v, &end, 10);
    return (end && *end == 0) ? x : fallback;
}
} // namespace

uint32_t parseSources(const char* list) {
    struct Name {
        const char* name;
        SourceBit bit;
    };
    static constexpr Name kNames[] = {{"io", SourceBit::Io}, {"mpi", SourceBit::Mpi},
                                      {"socket", SourceBit::Socket}, {"rdma", SourceBit::Rdma},
                                      {"cuda", SourceBit::Cuda},     {"nvtx", SourceBit::Nvtx},
                                      {"nccl", SourceBit::Nccl},
                                      {"nccl_plugin", SourceBit::NcclPlugin},
                                      {"counters", SourceBit::Counters}};
    uint32_t bits = 0;
    const char* p = list;
    while (p && *p) {
        const char* comma = std::strchr(p, ',');
        size_t len = comma ? size_t(comma - p) : std::strlen(p);
        if (len == 3 && std::strncmp(p, "all", 3) == 0) bits = ~0u;
        for (const auto& n : kNames)
            if (std::strlen(n.name) == len && std::strncmp(p, n.name, len) == 0)
                bits |= uint32_t(n.bit);
        p = comma ? comma + 1 : nullptr;
    }
    return bits;
}

Config readConfig() {
    Config c;
    const char* dir = std::getenv("HPCPROF_RAW_DIR");
    if (dir && *dir && std::strlen(dir) < sizeof(c.rawDir)) {
        std::strcpy(c.rawDir, dir);
        c.enabled = true;
    }
    if (const char* s = std::getenv("HPCPROF_SOURCES"); s && *s) c.sources = parseSources(s);
    c.threadBufferBytes = envU64("HPCPROF_THREAD_BUFFER_MB", 1024) << 20;
    c.chunkBytes = envU64("HPCPROF_CHUNK_KB", 1024) << 10;
    c.provisionHelper = envU64("HPCPROF_PROVISION_HELPER", 1) != 0;
    if (c.chunkBytes < 4096) c.chunkBytes = 4096;
    c.chunkBytes &= ~uint64_t(4095);
    if (c.threadBufferBytes < c.chunkBytes) c.threadBufferBytes = c.chunkBytes;
    c.tscHz = envU64("HPCPROF_TSC_HZ", 0);
    if (const char* skew = std::getenv("HPCPROF_CLOCK_SKEW_NS"); skew && *skew)
        c.clockSkewNs = std::strtoll(skew, nullptr, 10);
    c.clockRequest = std::getenv("HPCPROF_CLOCK");
    c.rdmaEventRate = uint32_t(envU64("HPCPROF_RDMA_EVENT_RATE", c.rdmaEventRate));
    return c;
}

} // namespace hpcprof::collector

// SPDX-License-Identifier: MIT
// Facts about an event's name that the analyses ask for (is it a step range, an FP32 GEMM, a
// blocking copy, a send, a non-blocking call, an I/O data call), computed once per name and
// kept per worker of the rank pass.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hpcprof/analyzer/trace_index.hpp"

namespace hpcprof::analyzer {

enum NameFlag : uint8_t {
    kStepName = 1,
    kFp32Gemm = 2,    ///< an FP32 GEMM on the CUDA cores (gemm_kernels.hpp: GemmKind::Fp32Simt)
    kSyncCopyApi = 4, ///< cudaMemcpy* / cuMemcpy* without Async
    kSend = 8,
    kRecv = 16,
    kNonBlocking = 32, ///< MPI_I*
    kIoDataCall = 64,  ///< a read/write of the I/O data call family (io_summary.hpp)
    kInitOrFinalize = 128, ///< MPI_Init, MPI_Init_thread or MPI_Finalize (the POP region's ends)
};

/// The NameFlag bits of `name`.
uint8_t classifyName(const std::string& name);

/// classifyName() by string id, computed once per id.
class NameFlags {
public:
    explicit NameFlags(const TraceIndex& index) : m_index(index) {}
    uint8_t of(int64_t nameId) {
        if (nameId >= 0 && size_t(nameId) < m_flags.size() && m_flags[size_t(nameId)] >= 0)
            return uint8_t(m_flags[size_t(nameId)]);
        const uint8_t f = classifyName(m_index.string(nameId));
        if (nameId >= 0 && nameId < (int64_t(1) << 31)) {
            if (size_t(nameId) >= m_flags.size()) m_flags.resize(size_t(nameId) + 1, -1);
            m_flags[size_t(nameId)] = f;
        }
        return f;
    }

private:
    const TraceIndex& m_index;
    std::vector<int16_t> m_flags; ///< by name id, -1 = not classified yet
};

} // namespace hpcprof::analyzer

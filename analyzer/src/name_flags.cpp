// SPDX-License-Identifier: MIT
#include "name_flags.hpp"

#include <cctype>

#include "gemm_kernels.hpp"
#include "hpcprof/analyzer/io_summary.hpp"

namespace hpcprof::analyzer {

namespace {

std::string lower(std::string s) {
    for (auto& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

} // namespace

uint8_t classifyName(const std::string& name) {
    std::string l = lower(name);
    uint8_t f = 0;
    if (contains(l, "step")) f |= kStepName;
    if (gemmKindOf(name) == GemmKind::Fp32Simt) f |= kFp32Gemm;
    if ((l.rfind("cudamemcpy", 0) == 0 || l.rfind("cumemcpy", 0) == 0) && !contains(l, "async"))
        f |= kSyncCopyApi;
    if (!contains(l, "sendrecv")) {
        if (contains(l, "send")) f |= kSend;
        else if (contains(l, "recv")) f |= kRecv;
    }
    if (l.rfind("mpi_i", 0) == 0) f |= kNonBlocking;
    if (ioDirection(name) != IoDirection::None) f |= kIoDataCall;
    if (l == "mpi_init" || l == "mpi_init_thread" || l == "mpi_finalize") f |= kInitOrFinalize;
    return f;
}

} // namespace hpcprof::analyzer

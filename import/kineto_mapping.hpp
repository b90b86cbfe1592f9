// SPDX-License-Identifier: MIT
// Pure mapping rules from Chrome/Kineto trace fields to hpcprof's: exact time conversion of JSON
// number text, category mapping, NCCL kernel recognition, memcpy kinds, rank from a file name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hpcprof/schema/catalog.hpp"

namespace hpcprof::import {

/// Converts a JSON number's text (e.g. "1682725898236567.125", "68.0", "1.5e3") in a unit of
/// `nsPerUnit` nanoseconds into integer ns without going through binary floating point; digits
/// below 1 ns are rounded half away from zero. Empty on malformed text or overflow.
std::optional<int64_t> decimalToNs(std::string_view text, int64_t nsPerUnit);

/// Where an event lives.
enum class Lane : uint8_t { Cpu, Gpu };

struct CategoryMapping {
    schema::Category category;
    Lane lane;
    bool known; ///< false: an unknown category, mapped to cpu_op
    /// A Kineto category hpcprof does not analyse (profiler overhead, CUDA event records, MTIA
    /// insight and counter events, ...): not imported, so that it is not taken for host work.
    bool notAnalysed = false;
    /// The accelerator of a device category other than CUDA's ("MTIA"): names its tracks.
    std::string_view accelerator = {};
};

/// Maps a Kineto/Chrome "cat" (case-insensitive, old and new Kineto spellings) and the event name
/// to an hpcprof category and lane. Kernels whose name marks them as NCCL become gpu_comm_kernel;
/// `hasCollectiveArgs` (newer traces put "Collective name" in args) does too. Other accelerators'
/// categories are read like CUDA's: their on-device events (MTIA's `mtia_ccp_events`) as kernels
/// on a device track, their runtime and driver calls (`xpu_runtime`, `mtia_runtime`,
/// `privateuse1_driver`, any `*_runtime` / `*_driver`) as runtime API calls.
CategoryMapping mapCategory(std::string_view cat, std::string_view name, bool hasCollectiveArgs);

/// True for NCCL kernel names: "ncclKernel_*", "ncclDevKernel_*", "void ncclKernel...", etc.
bool isNcclKernelName(std::string_view name);

/// The collective of an NCCL kernel name: "ncclDevKernel_AllReduce_Sum_f32_RING_LL" -> "AllReduce".
std::string ncclCollectiveFromName(std::string_view name);

/// True for point-to-point operations (SendRecv, Send, Recv), whose ends do not coincide across
/// ranks and so are not used for clock alignment.
bool isPointToPoint(std::string_view collective);

/// Size in bytes of a Kineto/PyTorch dtype name ("Float", "float32", "BFloat16", "Long", ...);
/// 0 when unknown.
int64_t dtypeSize(std::string_view dtype);

/// Memcpy direction and memory kinds from "Memcpy DtoH (Device -> Pageable)".
struct MemcpyKinds {
    std::string copyKind, srcKind, dstKind; ///< empty when absent
};
MemcpyKinds parseMemcpyName(std::string_view name);

/// A rank written in a file name, "...rank-3...", "rank_12", "Rank7" (case-insensitive).
std::optional<int64_t> rankFromFileName(std::string_view fileName);

} // namespace hpcprof::import

// SPDX-License-Identifier: MIT
// The raw capture ABI: what the in-process agent writes and the store step reads.
//
// A run's raw directory holds one folder per process:
//
//   RAWDIR/
//     proc-<pid>-<start_ns>/
//       process.bin        one ProcessHeader (4 KiB), memory-mapped, updated in place
//       thread-<tid>       ThreadFileHeader (4 KiB) + fixed-size 64-byte records, grown in chunks
//       thread-<tid>-<k>   the same, for a later thread the kernel gave the same id
//       thread-spare-<n>   the same, made ahead by the agent for a starting thread (its header
//                          names the thread; all zero: no thread took it, nothing to read)
//
// Thread file layout:
//
//   0        4096                 4096 + 64*k
//   +--------+--------+--------+-- ... --+--------+----------------- (zero-filled tail)
//   | header | rec 0  | rec 1  |         | rec k-1| unused slots
//   +--------+--------+--------+-- ... --+--------+-----------------
//
// Both files are MAP_SHARED mappings, so every completed record reaches the page cache the moment
// it is written and survives SIGKILL or a crash of the process. No page is mapped before its
// disk blocks exist; a thread whose file cannot grow (full disk, quota, buffer limit) stops
// recording and says when and why in its header (format 4). A record is "committed" when its
// first byte (kind) is non-zero: writers fill the body first and store the kind last with release
// ordering. header.reserved counts slots handed out; a reserved slot whose kind is still Empty was
// interrupted (killed mid-record) and is counted as torn by the store.
//
// The records are split by family (raw/common.hpp: headers, call records, strings, repeats;
// raw/mpi.hpp, raw/gpu.hpp, raw/rdma.hpp, raw/counters.hpp); this header includes them all and
// says which records may repeat.
//
// GPU records (raw/gpu.hpp: NvtxRecord, NcclRecord, GpuRecord): the same 64-byte slots
// with their own kinds; plain copyable structs whose kind byte is published with
// __atomic_store_n(..., __ATOMIC_RELEASE). NVTX and NCCL records are written by the application
// thread that made the call (timestamps in raw ticks). GpuRecords are written by the CUPTI drain thread into its
// own thread file; their timestamps are CLOCK_MONOTONIC ns (CUPTI's timestamp callback must
// return ns), and CUDA API records name the calling thread in `callerTid` so the store can move them
// onto that thread's track. NVTX push/pop and start/end are separate records that the store pairs
// (per thread and domain / by range id), so a range open when the process dies is still seen.
#pragma once

#include "hpcprof/schema/raw/common.hpp"
#include "hpcprof/schema/raw/counters.hpp"
#include "hpcprof/schema/raw/gpu.hpp"
#include "hpcprof/schema/raw/mpi.hpp"
#include "hpcprof/schema/raw/rdma.hpp"

namespace hpcprof::schema::raw {

/// How `record` (a full 64-byte record) may be repeated by a RepeatRecord, or nullptr if not.
inline const RepeatLayout* repeatLayout(const void* record) {
    const auto* b = static_cast<const uint8_t*>(record);
    if (b[0] == uint8_t(RecordKind::Event)) return &kSpanRepeat;
    if (b[0] != uint8_t(RecordKind::Rdma)) return nullptr;
    switch (RdmaAction(b[1])) {
    case RdmaAction::Call: return &kSpanRepeat;
    case RdmaAction::PostOne:
    case RdmaAction::PollOne: return &kOneWrRepeat;
    default: return nullptr;
    }
}

} // namespace hpcprof::schema::raw

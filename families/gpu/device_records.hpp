// SPDX-License-Identifier: MIT
// Store step for the GPU section of the raw format (NvtxRecord, NcclRecord, GpuRecord): pairs
// NVTX pushes with pops, resolves NCCL communicators and sizes, moves CUDA API records onto the
// thread that made the call, joins GPU work to API calls and NCCL calls by correlation id, and
// writes one gpu_stream track per (device, stream).
//
// The gpu family's converter (families/gpu/gpu_store.cpp) drives it: prepare() turns the
// CPU-side records into events the family owns, decorate() and addArgs() complete them in the
// merge loop, writeGpuTracks() writes the GPU streams.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "clock_mapping.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

class DeviceRecords {
public:
    /// Text of a process-local string id, nullptr if unknown.
    using StringLookup = std::function<const std::string*(uint32_t)>;
    using AddStat = std::function<void(schema::Stat, int64_t)>;

    /// Maps the process's local monotonic ns to trace ns (offset, and any clock alignment).
    using ToTrace = std::function<int64_t(int64_t)>;

    DeviceRecords(TraceWriter& w, const schema::raw::ProcessHeader& h, const TickConverter& clock,
                  ToTrace toTrace, StringLookup strings, AddStat addStat,
                  std::vector<std::string>& warnings);
    /// The same with a constant offset from local to trace ns.
    DeviceRecords(TraceWriter& w, const schema::raw::ProcessHeader& h, const TickConverter& clock,
                  int64_t offsetNs, StringLookup strings, AddStat addStat,
                  std::vector<std::string>& warnings)
        : DeviceRecords(w, h, clock, [offsetNs](int64_t ns) { return ns + offsetNs; },
                        std::move(strings), std::move(addStat), warnings) {}

    /// Reads section `slot` of each thread and owns its events as family slot + 1 (family.hpp).
    void bindSection(int slot) { m_slot = slot; }

    /// Converts the GPU-section records of every thread: NVTX/NCCL/CUDA-API records become
    /// RawEvents (extra != 0) on the thread they belong to (threads are added for API callers
    /// that have no file of their own); GPU activity is kept for writeGpuTracks(). Threads that
    /// only carried GPU activity (the CUPTI drain thread) are removed.
    void prepare(std::vector<ThreadRecords>& threads);

    /// Name, correlation, communicator, seq and bytes of an event prepare() added.
    void decorate(const RawEvent& e, EventRow& row);
    /// event_arg rows of an event prepare() added.
    void addArgs(const RawEvent& e, int64_t eventId);

    /// Writes one gpu_stream track per (device, stream); raises lastEnd to the latest GPU end.
    Status writeGpuTracks(int64_t processId, int64_t& lastEnd);

    /// Argument value of an event_arg row.
    using ArgValue = std::variant<int64_t, std::string>;
    /// event_arg rows of one event (key, value).
    using Args = std::vector<std::pair<const char*, ArgValue>>;

private:
    struct Extra {
        std::optional<int64_t> nameId, correlationId, communicatorId, seq, bytes, peer;
        std::optional<int64_t> category; ///< overrides the op's category
        Args args;
    };

    uint32_t addExtra(Extra&& x);
    /// Makes `e` an event of this family, its facts at m_extras[index - 1].
    void own(RawEvent& e, uint32_t index) {
        e.family = uint8_t(m_slot + 1);
        e.familyIndex = index;
    }
    int64_t nameFor(uint32_t stringId, std::string_view fallback);
    uint64_t ticksFor(int64_t monotonicNs) const;
    std::string domainName(uint32_t id) const;
    RawEvent nvtxEvent(const schema::raw::NvtxRecord& begin, uint64_t end, schema::Op op);
    void convertNvtx(ThreadRecords& t, uint64_t processEndTicks);
    void pairStartEnd(std::vector<ThreadRecords>& threads, uint64_t processEndTicks);
    /// Appends the event of `r` to `t` and returns its facts; nullptr for records that are not
    /// events (plugin communicator info, plugin drop counts).
    const Extra* convertNccl(ThreadRecords& t, const schema::raw::NcclRecord& r);
    void collectGpu(const std::vector<ThreadRecords>& threads);
    void convertPluginFields(schema::Op op, const schema::raw::NcclRecord& r, Extra& x);
    RawEvent cudaApiEvent(const schema::raw::GpuRecord& r);
    RawEvent syncEvent(const schema::raw::GpuRecord& r);

    TraceWriter& m_w;
    const schema::raw::ProcessHeader& m_h;
    const TickConverter& m_clock;
    ToTrace m_toTrace;
    StringLookup m_strings;
    AddStat m_addStat;
    std::vector<std::string>& m_warnings;
    std::vector<Extra> m_extras;
    int m_slot = 0;

    // NVTX: category names per (domain, category); start/end ranges pending pairing.
    std::map<std::pair<std::string, uint32_t>, std::string> m_categoryNames;
    struct OpenStart {
        schema::raw::NvtxRecord rec;
        int32_t tid;
    };
    std::unordered_map<uint64_t, OpenStart> m_openStarts;
    std::vector<std::pair<uint64_t, uint64_t>> m_ends; ///< (range id, ts)

    // NCCL: communicator key -> (rank, size) from creation records.
    struct CommInfo {
        int64_t size = -1;
        int64_t rank = -1;
    };
    std::unordered_map<std::string, CommInfo> m_comms;
    // CUPTI correlation
    std::unordered_map<uint32_t, int32_t> m_apiThread;          ///< correlation id -> tid
    std::unordered_map<uint64_t, uint32_t> m_externalToCorr;    ///< external id -> first corr id
    std::unordered_map<uint32_t, uint64_t> m_corrToExternal;    ///< corr id -> external id
    struct NcclCallRef {
        int64_t communicatorId = 0;
        int64_t seq = -1;
    };
    std::unordered_map<uint64_t, NcclCallRef> m_ncclByExternal; ///< external id -> NCCL call
    std::map<std::pair<uint32_t, uint32_t>, std::vector<schema::raw::GpuRecord>> m_streams;
    std::unordered_set<int64_t> m_ncclKernelNames; ///< trace string ids of NCCL kernels

    // prepare()'s steps, in the order it takes them.
    uint64_t processEndTicks(const std::vector<ThreadRecords>& threads) const;
    std::vector<std::pair<int32_t, RawEvent>>
    cudaApiEvents(const std::vector<ThreadRecords>& threads);
    void collectCategoryNames(const std::vector<ThreadRecords>& threads);
    void convertNcclCalls(ThreadRecords& t);
    void noteExternalId(const schema::raw::NcclRecord& r, const Extra& x,
                        std::map<uint32_t, NcclCallRef>& groupFirst);
    void addToCallers(std::vector<ThreadRecords>& threads,
                      const std::vector<std::pair<int32_t, RawEvent>>& moved);
    void dropDrainThreads(std::vector<ThreadRecords>& threads);

    // collectGpu()'s, per GPU record.
    void collectGpuRecord(const schema::raw::GpuRecord& g, std::vector<uint32_t>& gpuCorrelations);
    void noteCuptiUnavailable(const schema::raw::GpuRecord& g);
    void keepGpuActivity(const schema::raw::GpuRecord& g, std::vector<uint32_t>& gpuCorrelations);

    // convertNccl()'s.
    bool takePluginNote(const schema::raw::NcclRecord& r);
    CommInfo resolveCommunicator(schema::Op op, const schema::raw::NcclRecord& r, Extra& x);
    static void convertCallFields(schema::Op op, const schema::raw::NcclRecord& r,
                                  const CommInfo& info, Extra& x);

    // writeGpuTracks()'s.
    using KernelNames = std::unordered_map<uint32_t, int64_t>; ///< process string id -> trace's
    Status writeGpuStream(int64_t processId, uint32_t device, uint32_t stream,
                          std::vector<schema::raw::GpuRecord>& recs, KernelNames& kernelNames,
                          int64_t& lastEnd);
    bool gpuRow(const schema::raw::GpuRecord& g, KernelNames& kernelNames, EventRow& row,
                Args& args);
    void describeKernel(const schema::raw::GpuRecord& g, KernelNames& kernelNames, EventRow& row,
                        Args& args);
    int64_t kernelNameId(uint32_t nameId, KernelNames& kernelNames);
    const NcclCallRef* ncclCallOf(uint32_t correlationId) const;
    void describeCopy(const schema::raw::GpuRecord& g, EventRow& row, Args& args);
};

} // namespace hpcprof::store

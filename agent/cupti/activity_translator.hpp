// SPDX-License-Identifier: MIT
// CUPTI activity records -> GpuRecords (raw_format.hpp). A pure translation with a sink seam:
// the agent's sink appends to the drain thread's raw file; tests feed hand-filled CUDA 13
// activity structs and collect the output (Kineto's MockCuptiActivityBuffer idea, one level up).
//
// Runs on the drain thread only (not thread-safe; allocation allowed: a name table).
#pragma once

#include <cupti_activity.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::agent::cupti {

/// Where translated records go.
class RecordSink {
public:
    virtual ~RecordSink() = default;
    /// A zeroed 64-byte slot to fill, or nullptr (the record is dropped and counted by the sink).
    virtual schema::raw::GpuRecord* reserve() = 0;
    /// Publishes a filled slot.
    virtual void commit(schema::raw::GpuRecord* r) = 0;
    /// Interns a string (defines it in the raw stream), returning its id; 0 if impossible.
    virtual uint32_t intern(const char* text, size_t len) = 0;
    /// Name of a runtime (true) or driver (false) API callback id, nullptr if unknown.
    virtual const char* apiName(bool runtime, uint32_t cbid) = 0;
};

class ActivityTranslator {
public:
    explicit ActivityTranslator(RecordSink& sink) : m_sink(sink) {}

    /// Translates one record; kinds hpcprof does not use are ignored (counted in ignored()).
    void translate(const CUpti_Activity* record);
    /// Records that CUPTI dropped `count` records.
    void dropped(uint64_t count);
    /// Records that CUDA activity cannot be collected in this process, and why.
    void unavailable(const char* reason);

    uint64_t translated() const { return m_translated; }
    uint64_t ignored() const { return m_ignored; }

private:
    uint32_t nameId(const char* name);
    uint32_t apiNameId(bool runtime, uint32_t cbid);
    schema::raw::GpuRecord* begin(schema::raw::GpuActivity activity, schema::Op op);
    // One translation per activity kind (translate() dispatches).
    void translateKernel(const CUpti_Activity* record);
    void translateMemcpy(const CUpti_Activity* record);
    void translateMemcpyPeer(const CUpti_Activity* record);
    void translateMemset(const CUpti_Activity* record);
    void translateSync(const CUpti_Activity* record);
    void translateGraphLaunch(const CUpti_Activity* record);
    void translateApi(const CUpti_Activity* record);
    void translateExternalCorrelation(const CUpti_Activity* record);
    void translateOverhead(const CUpti_Activity* record);

    RecordSink& m_sink;
    std::unordered_map<std::string, uint32_t> m_names;
    std::unordered_map<uint64_t, uint32_t> m_apiNames; ///< (runtime << 32 | cbid) -> id
    std::unordered_map<uint32_t, uint32_t> m_contextDevice; ///< context id -> device id
    uint64_t m_translated = 0;
    uint64_t m_ignored = 0;
};

} // namespace hpcprof::agent::cupti

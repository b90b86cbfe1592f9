// SPDX-License-Identifier: MIT
// The gpu family's part of the store step: the GPU section of the raw format (CUPTI activity and
// API records, NVTX ranges, NCCL calls and plugin events), converted by DeviceRecords
// (device_records.hpp).
#include "device_records.hpp"
#include "family.hpp"

namespace hpcprof::store {

namespace {

namespace raw = schema::raw;

class GpuConverter final : public ProcessConverter {
public:
    GpuConverter(const ProcessContext& ctx, int slot)
        : m_records(ctx.writer, ctx.header, ctx.clock, ctx.monotonicToTrace, ctx.strings, ctx.addStat,
                    ctx.warnings) {
        m_records.bindSection(slot);
    }
    void prepare(std::vector<ThreadRecords>& threads) override { m_records.prepare(threads); }
    void decorate(const RawEvent& e, EventRow& row) override { m_records.decorate(e, row); }
    void inserted(const RawEvent& e, int64_t eventId) override { m_records.addArgs(e, eventId); }
    Status finish(int64_t processId, int64_t& lastEnd) override {
        return m_records.writeGpuTracks(processId, lastEnd);
    }

private:
    DeviceRecords m_records;
};

class GpuStore final : public StoreFamily {
public:
    std::string_view name() const override { return "gpu"; }
    std::vector<raw::RecordKind> recordKinds() const override {
        return {raw::RecordKind::Nvtx, raw::RecordKind::Nccl, raw::RecordKind::Gpu};
    }
    std::unique_ptr<ProcessConverter> converter(const ProcessContext& ctx, int slot) override {
        return std::make_unique<GpuConverter>(ctx, slot);
    }
};

} // namespace

std::unique_ptr<StoreFamily> makeGpuStore() { return std::make_unique<GpuStore>(); }

} // namespace hpcprof::store

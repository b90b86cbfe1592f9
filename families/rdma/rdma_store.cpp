// SPDX-License-Identifier: MIT
// The rdma family's part of the store step: verbs calls, work requests, completions and the
// agent's aggregates become call events, nic_queue tracks and folded buckets (RdmaRecords,
// rdma_records.hpp); once every process is in, each queue pair's peer rank is
// derived from the queue pairs of all processes (rdma_peers.hpp).
#include "family.hpp"
#include "rdma_peers.hpp"
#include "rdma_records.hpp"

namespace hpcprof::store {

namespace {

namespace raw = schema::raw;

class RdmaConverter final : public ProcessConverter {
public:
    RdmaConverter(const ProcessContext& ctx, int slot)
        : m_records(ctx.writer, ctx.ticksToTrace, ctx.strings, ctx.addStat) {
        m_records.bindSection(slot);
    }
    void prepare(std::vector<ThreadRecords>& threads) override { m_records.prepare(threads); }
    void inserted(const RawEvent& e, int64_t eventId) override { m_records.addArgs(e, eventId); }
    Status finish(int64_t processId, int64_t& lastEnd) override {
        return m_records.writeNicTracks(processId, lastEnd);
    }

private:
    RdmaRecords m_records;
};

class RdmaStore final : public StoreFamily {
public:
    std::string_view name() const override { return "rdma"; }
    std::vector<raw::RecordKind> recordKinds() const override { return {raw::RecordKind::Rdma}; }
    /// Verbs calls made inside an MPI or NCCL call are attributed to it: the NCCL calls are
    /// events only once the gpu family prepared them (MPI calls are plain events from the start).
    std::vector<std::string_view> prepareAfter() const override { return {"gpu"}; }
    std::unique_ptr<ProcessConverter> converter(const ProcessContext& ctx, int slot) override {
        return std::make_unique<RdmaConverter>(ctx, slot);
    }
    Status finishRun(TraceWriter& writer, std::vector<std::string>&) override {
        auto peers = deriveRdmaPeers(writer.db());
        return peers.ok() ? Status() : peers.status();
    }
};

} // namespace

std::unique_ptr<StoreFamily> makeRdmaStore() { return std::make_unique<RdmaStore>(); }

} // namespace hpcprof::store

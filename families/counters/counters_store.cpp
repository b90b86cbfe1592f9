// SPDX-License-Identifier: MIT
// The counters family's part of the store step: counter definitions and samples become counter
// tracks (CounterRecords, counter_records.hpp); what every process said about
// its counters is summed up once at the end of the run (metadata `counters`, one warning per
// reason a counter could not be counted).
#include "counter_records.hpp"
#include "family.hpp"

namespace hpcprof::store {

namespace {

namespace raw = schema::raw;

class CountersConverter final : public ProcessConverter {
public:
    CountersConverter(const ProcessContext& ctx, int slot, CounterSummary& summary)
        : m_records(ctx.writer, ctx.ticksToTrace, ctx.strings, ctx.addStat, summary, ctx.host) {
        m_records.bindSection(slot);
    }
    void prepare(std::vector<ThreadRecords>& threads) override { m_records.prepare(threads); }
    Status finish(int64_t processId, int64_t&) override { return m_records.write(processId); }

private:
    CounterRecords m_records;
};

class CountersStore final : public StoreFamily {
public:
    std::string_view name() const override { return "counters"; }
    std::vector<raw::RecordKind> recordKinds() const override {
        return {raw::RecordKind::Counter, raw::RecordKind::CounterDef};
    }
    /// The sampler thread it drops may carry GPU records (then it is kept): the gpu family
    /// takes its records first.
    std::vector<std::string_view> prepareAfter() const override { return {"gpu"}; }
    std::unique_ptr<ProcessConverter> converter(const ProcessContext& ctx, int slot) override {
        return std::make_unique<CountersConverter>(ctx, slot, m_summary);
    }
    Status finishRun(TraceWriter& writer, std::vector<std::string>& warnings) override {
        return m_summary.finish(writer, warnings);
    }

private:
    CounterSummary m_summary;
};

} // namespace

std::unique_ptr<StoreFamily> makeCountersStore() { return std::make_unique<CountersStore>(); }

} // namespace hpcprof::store

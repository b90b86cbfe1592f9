// SPDX-License-Identifier: MIT
// The communication family's part of the store step: MPI non-blocking requests. The agent
// writes, before each MPI_Wait*/MPI_Test* event, one MpiCompletionRecord per request the call
// completed (and before each MPI_Sendrecv(_replace) one per half it moved, which the call
// posted itself); this converter ties them to that call (a signal handler's event in between does not take them),
// remembers which call posted each request (MPI_I*, MPI_Start*: flag kFlagRequest, request
// number in seq), and writes one mpi_completion row per completed request once every thread of
// the process is in (a request may complete on another thread than the one that posted it).
#include <algorithm>
#include <unordered_map>

#include "family.hpp"

namespace hpcprof::store {

namespace {

namespace raw = schema::raw;

/// MPI_Sendrecv(_replace): posts its two halves and completes them itself.
bool isSendrecv(uint16_t op) {
    return op == uint16_t(schema::Op::MpiSendrecv) || op == uint16_t(schema::Op::MpiSendrecvReplace);
}

/// MPI_Wait* / MPI_Test* complete non-blocking requests; MPI_Sendrecv(_replace) its own halves.
bool completesRequests(uint16_t op) {
    const schema::OpInfo* info = schema::findOp(op);
    return (info && info->category == schema::Category::MpiWait) || isSendrecv(op);
}

class MpiRequests final : public ProcessConverter {
public:
    MpiRequests(const ProcessContext& ctx, int slot) : m_ctx(ctx), m_slot(slot) {}

    void prepare(std::vector<ThreadRecords>& threads) override {
        // Posting events matter only to the completions they resolve: a process without
        // completion records (no MPI, or no waits) needs no pass over its events (2 % of the
        // 1 M pwrite conversion's CPU).
        if (std::all_of(threads.begin(), threads.end(),
                        [&](const ThreadRecords& t) { return sectionRecords(t, m_slot).empty(); }))
            return;
        for (auto& t : threads) {
            if (size_t(m_slot) < t.sections.size()) attach(t, t.sections[size_t(m_slot)]);
            for (RawEvent& e : t.events)
                if ((e.flags & raw::kFlagRequest) && e.family == 0) e.family = uint8_t(m_slot + 1);
        }
    }

    void inserted(const RawEvent& e, int64_t eventId) override {
        if (e.flags & raw::kFlagRequest) {
            // MPI_Startall posted requests seq .. seq + tag - 1; other calls one.
            int32_t posted = e.op == uint16_t(schema::Op::MpiStartall) ? e.tag : 1;
            for (int32_t k = 0; k < posted; ++k) m_posted[e.seq + uint32_t(k)] = eventId;
        }
        if (e.familyIndex == 0) return;
        for (const raw::MpiCompletionRecord& c : m_completedBy[e.familyIndex - 1]) {
            MpiCompletionRow row;
            row.eventId = eventId;
            row.request = c.request;
            row.isRecv = c.isRecv != 0;
            if (c.peer >= 0) row.peer = c.peer;
            row.tag = c.tag;
            if (c.bytes >= 0) row.bytes = c.bytes;
            if (isSendrecv(e.op)) row.postEventId = eventId;
            m_rows.push_back(row);
        }
    }

    Status finish(int64_t, int64_t&) override {
        for (MpiCompletionRow& row : m_rows) {
            // A Sendrecv's halves already name their call.
            auto it = row.postEventId ? m_posted.end() : m_posted.find(uint32_t(row.request));
            if (it != m_posted.end()) row.postEventId = it->second;
            m_ctx.writer.insertMpiCompletion(row);
        }
        return m_ctx.writer.error();
    }

private:
    /// The completion records just before a wait/test are its completed requests.
    void attach(ThreadRecords& t, const RecordSection& section) {
        std::vector<raw::MpiCompletionRecord> pending;
        size_t next = 0;
        for (size_t i = 0; i < t.events.size(); ++i) {
            for (; next < section.records.size() && section.eventsBefore[next] <= i; ++next)
                pending.push_back(recordAs<raw::MpiCompletionRecord>(section.records[next]));
            RawEvent& e = t.events[i];
            if (pending.empty() || !completesRequests(e.op)) continue;
            m_completedBy.push_back(std::move(pending));
            pending.clear();
            e.family = uint8_t(m_slot + 1);
            e.familyIndex = uint32_t(m_completedBy.size());
        }
        const int64_t unattached = int64_t(pending.size() + (section.records.size() - next));
        m_ctx.addStat(schema::Stat::MpiCompletionsUnattached, unattached);
    }

    const ProcessContext& m_ctx;
    int m_slot;
    std::vector<std::vector<raw::MpiCompletionRecord>> m_completedBy; ///< by familyIndex - 1
    std::unordered_map<uint32_t, int64_t> m_posted; ///< request number -> posting event id
    std::vector<MpiCompletionRow> m_rows;
};

class MpiStore final : public StoreFamily {
public:
    std::string_view name() const override { return "communication"; }
    std::vector<raw::RecordKind> recordKinds() const override { return {raw::RecordKind::MpiCompletion}; }
    std::unique_ptr<ProcessConverter> converter(const ProcessContext& ctx, int slot) override {
        return std::make_unique<MpiRequests>(ctx, slot);
    }
};

} // namespace

std::unique_ptr<StoreFamily> makeCommunicationStore() { return std::make_unique<MpiStore>(); }

} // namespace hpcprof::store

// SPDX-License-Identifier: MIT
// Store step for the RDMA section of the raw format (RdmaRecord, agent/ibverbs):
//  - each verbs call becomes one event on its thread's track, named as the function the program
//    called, bytes = the sg-list total of its work requests (polls: of the completions returned),
//    empty polls folded with a count; resource calls carry their facts as event_args;
//  - each work request becomes one event on a nic_queue track per (device, QP), from post to
//    completion when its wr_id pairs it with a completion, named by opcode (category rdma_wr,
//    class annotation: the time is the NIC's, the CPU side is already counted by the call);
//    requests built through ibv_qp_ex (kRdmaBatched) precede the ibv_wr_complete that posts
//    them and join it (same QP and start), or are dropped with a failed or aborted batch;
//  - beyond HPCPROF_RDMA_EVENT_RATE work requests per second and QP, the rest of each 1 ms
//    bucket folds into one aggregate event (count, bytes, latency histogram), counted in stats,
//    together with the Aggregate records of requests the agent already folded (wr_fold.hpp);
//  - verbs calls made inside an MPI/NCCL call of the same thread are attributed to it
//    (event_args caused_by, caused_by_communicator, caused_by_seq).
//
// The rdma family's converter (families/rdma/rdma_store.cpp) drives it: prepare(threads) after
// the families whose calls it attributes to (gpu: NCCL) added their events, addArgs(e, id) for
// the events it owns, writeNicTracks(processId, lastEnd) at the end of the process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "raw_reader.hpp"
#include "hpcprof/store/trace_writer.hpp"

namespace hpcprof::store {

class RdmaRecords {
public:
    using StringLookup = std::function<const std::string*(uint32_t)>;
    using AddStat = std::function<void(schema::Stat, int64_t)>;
    /// Raw ticks of this process -> trace ns.
    using TicksToTrace = std::function<int64_t(uint64_t)>;

    RdmaRecords(TraceWriter& w, TicksToTrace toTrace, StringLookup strings, AddStat addStat);

    /// Turns every thread's RDMA records into call events on that thread (RawEvents that
    /// owned by this family) and keeps work requests and completions for writeNicTracks().
    void prepare(std::vector<ThreadRecords>& threads);

    /// Reads section `slot` of each thread and owns its call events as family slot + 1.
    void bindSection(int slot) { m_slot = slot; }
    /// event_arg rows of an event prepare() added.
    void addArgs(const RawEvent& e, int64_t eventId);

    /// Writes one nic_queue track per (device, QP) (and per SRQ); raises lastEnd.
    Status writeNicTracks(int64_t processId, int64_t& lastEnd);

    using ArgValue = std::variant<int64_t, std::string>;
    using Args = std::vector<std::pair<std::string, ArgValue>>;

    /// One ms bucket per QP when rating; public for tests.
    static constexpr int64_t kBucketNs = 1'000'000;

private:
    struct Device {
        std::string name;
        int64_t rateMbps = 0;
        uint32_t eventRate = 0;
    };
    struct Qp {
        uint8_t type = 0;
        bool sigAll = false;
        uint32_t remoteQpn = 0;
        uint16_t dlid = 0;
    };
    struct Wr {
        uint16_t device;
        uint32_t qpNum;    ///< 0 for SRQ receives
        uint64_t srq;      ///< SRQ address for SRQ receives
        uint64_t post;     ///< ticks
        uint64_t done = 0; ///< completion ticks, 0 = no completion seen
        uint64_t wrId;
        uint64_t bytes;
        uint64_t remoteAddr;
        uint32_t rkey;
        uint8_t opcode; ///< ibv_wr_opcode, 255 = receive
        bool signaled;
        uint8_t status = 0;
        uint32_t call;  ///< index of the posting call's facts (attribution)
    };
    struct Completion {
        uint16_t device;
        uint32_t qpNum;
        uint64_t ts;
        uint64_t wrId;
        uint32_t byteLen;
        uint8_t status, opcode;
    };
    /// An Aggregate record: requests (and their completions) the agent folded.
    struct AgentAggregate {
        uint16_t device;
        uint32_t qpNum;
        bool receives;    ///< of the QP's receive queue (else its send queue)
        uint64_t ts, end; ///< ticks
        uint64_t bytes;
        uint32_t posted, completed;
        uint16_t latency[schema::raw::kRdmaLatencyBins];
    };
    struct CallFacts {
        Args args;
        int64_t tid = 0;
    };

    /// One bucket's folded work requests on a lane: those the store folded and the agent's.
    struct FoldedBucket;
    using FoldedBuckets = std::map<int64_t, FoldedBucket>; ///< by bucket (ts / kBucketNs)
    using AgentAggregates = std::vector<const AgentAggregate*>;

    // convertThread(): each record by the handler of its action, the one-record forms
    // (PostOne, PollOne) as the records they stand for.
    struct ThreadState;
    void convertThread(ThreadRecords& t);
    void convert(const schema::raw::RdmaRecord& r, ThreadState& state);
    void takeDevice(const schema::raw::RdmaRecord& r);
    void takePort(const schema::raw::RdmaRecord& r);
    void takeResource(const schema::raw::RdmaRecord& r, CallFacts* call);
    void takeQpState(const schema::raw::RdmaRecord& r, CallFacts* call);
    void takeCall(const schema::raw::RdmaRecord& r, ThreadState& state);
    void addCallArgs(const schema::raw::RdmaRecord& r, Args& args) const;
    void settleBatch(const schema::raw::RdmaRecord& r, bool posted, ThreadState& state);
    void takeWorkRequest(const schema::raw::RdmaRecord& r, ThreadState& state);
    void takeCompletion(const schema::raw::RdmaRecord& r);
    void takeAggregate(const schema::raw::RdmaRecord& r);

    void attribute(ThreadRecords& t, size_t firstCall);
    void pairCompletions();
    /// Adds the agent's Aggregate records of one lane to its buckets (that of their first post).
    void addAgentAggregates(const AgentAggregates& aggregates, FoldedBuckets& folded) const;
    /// Takes out of `unmatched` the completions of requests the agent folded (polled by another
    /// thread than the posting one), counting them in `folded`.
    void absorbCompletions(const AgentAggregates& aggregates, std::vector<const Completion*>& unmatched,
                           FoldedBuckets& folded) const;

    // writeNicTracks(): the lanes, then each lane's rows and track.
    struct NicLanes;
    struct NicRow;
    NicLanes collectLanes() const;
    Status writeLane(int64_t processId, uint16_t device, uint32_t qpNum, uint64_t srq,
                     std::vector<const Wr*>& wrs, NicLanes& lanes, int64_t& lastEnd);
    std::vector<NicRow> workRequestRows(uint16_t device, uint32_t qpNum,
                                        const std::vector<const Wr*>& wrs, FoldedBuckets& folded);
    NicRow workRequestRow(const Wr& w, int64_t ts, int64_t latency, const Qp* qp);
    int64_t addFoldedRows(const FoldedBuckets& folded, std::vector<NicRow>& rows);
    void addUnmatchedRows(const std::vector<const Completion*>& unmatched,
                          std::vector<NicRow>& rows);
    Status insertLane(int64_t processId, uint16_t device, uint32_t qpNum, uint64_t srq,
                      std::vector<NicRow>& rows, int64_t& lastEnd);

    TraceWriter& m_w;
    TicksToTrace m_toTrace;
    StringLookup m_strings;
    AddStat m_addStat;
    std::vector<CallFacts> m_calls; ///< per call event (1-based in RawEvent::seq)
    std::map<uint16_t, Device> m_devices;
    std::map<std::pair<uint16_t, uint32_t>, Qp> m_qps;
    std::vector<Wr> m_wrs;
    std::vector<Completion> m_completions;
    std::vector<Completion> m_unmatched;
    std::vector<AgentAggregate> m_agentAggregates;
    int m_slot = 0;
};

/// Name of an ibv_wr_opcode (255 = a receive) as shown on nic_queue tracks.
std::string_view rdmaOpcodeName(uint8_t opcode);
/// Name of an ibv_wc_status.
std::string_view rdmaStatusName(uint8_t status);

} // namespace hpcprof::store

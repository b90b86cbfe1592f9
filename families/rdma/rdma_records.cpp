// SPDX-License-Identifier: MIT
#include "rdma_records.hpp"
#include "hpcprof/store/nesting_depth.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <deque>
#include <tuple>

namespace hpcprof::store {

namespace raw = schema::raw;
using schema::Category;
using schema::Op;
using schema::Stat;

namespace {

// enum ibv_qp_type / ibv_qp_state / ibv_wc_opcode values (rdma-core verbs.h, stable ABI).
std::string_view qpTypeName(uint8_t t) {
    switch (t) {
    case 2: return "RC";
    case 3: return "UC";
    case 4: return "UD";
    case 8: return "RAW_PACKET";
    case 9: return "XRC_SEND";
    case 10: return "XRC_RECV";
    case 0xff: return "DRIVER";
    default: return "unknown";
    }
}
constexpr const char* kQpStates[] = {"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR"};
constexpr const char* kResources[] = {"", "pd", "mr", "cq", "qp", "srq"};

bool isRecvCompletion(uint8_t wcOpcode) { return wcOpcode & 0x80; } // IBV_WC_RECV = 1 << 7

bool isDataPath(Op op) {
    return op == Op::IbvPostSend || op == Op::IbvPostRecv || op == Op::IbvPostSrqRecv ||
           op == Op::IbvPollCq || op == Op::IbvWrComplete || op == Op::IbvStartPoll;
}

bool isPost(Op op) {
    return op == Op::IbvPostSend || op == Op::IbvPostRecv || op == Op::IbvPostSrqRecv ||
           op == Op::IbvWrComplete;
}

bool isPoll(Op op) { return op == Op::IbvPollCq || op == Op::IbvStartPoll; }

bool isCommunication(Category c) {
    return c != Category::Rdma && schema::categoryInfo(c).className == "communication";
}

/// Writes `args` as event_arg rows of event `eventId`.

// ---- The one-record forms (PollOne, PostOne) as the records they stand for --------------------

// A poll that returned one completion: its Call record (no QP, the CQ as object) and the
// Completion record (at the call's end), as the agent writes other polls.
raw::RdmaRecord pollOneCall(const raw::RdmaRecord& r) {
    raw::RdmaRecord call = r;
    call.action = raw::RdmaAction::Call;
    call.qpNum = 0;
    call.u.call = {};
    call.u.call.end = r.u.pollOne.end;
    call.u.call.bytes = r.u.wc.byteLen;
    call.u.call.object = r.u.wc.cq;
    call.u.call.count = 1;
    call.u.call.op = r.u.pollOne.op;
    return call;
}

raw::RdmaRecord pollOneCompletion(const raw::RdmaRecord& r) {
    raw::RdmaRecord wc = r;
    wc.action = raw::RdmaAction::Completion;
    wc.ts = r.u.pollOne.end;
    return wc;
}

// A single-WR post the provider accepted: the Call record and the WR record it stands for, in
// the order the agent writes them for other posts.
raw::RdmaRecord postOneCall(const raw::RdmaRecord& r) {
    raw::RdmaRecord call = r;
    call.action = raw::RdmaAction::Call;
    call.u.call = {};
    call.u.call.end = r.u.postOne.end;
    call.u.call.bytes = r.u.wr.bytes;
    call.u.call.object = r.u.wr.srq ? r.u.wr.remoteAddr : 0;
    call.u.call.count = 1;
    call.u.call.op = r.u.postOne.op;
    call.u.call.posted = 1;
    return call;
}

raw::RdmaRecord postOneWr(const raw::RdmaRecord& r) {
    raw::RdmaRecord wr = r;
    wr.action = wr.u.wr.opcode == 255 ? raw::RdmaAction::RecvWr : raw::RdmaAction::SendWr;
    return wr;
}

// ---- Facts of resource and QP-state records, as event_args of their call ------------------------

void addResourceArgs(const raw::RdmaRecord& r, RdmaRecords::Args& args) {
    const auto& res = r.u.resource;
    size_t type = size_t(res.type);
    args.emplace_back("resource",
                      std::string(type < std::size(kResources) ? kResources[type] : "?"));
    if (res.type == raw::RdmaResource::Mr) {
        args.emplace_back("length", int64_t(res.length));
        if (res.created) {
            args.emplace_back("access", int64_t(res.access));
            args.emplace_back("rkey", int64_t(res.key));
        }
    } else if (res.type == raw::RdmaResource::Qp && res.created) {
        args.emplace_back("qp_type", std::string(qpTypeName(res.qpType)));
        args.emplace_back("max_send_wr", int64_t(res.length));
        args.emplace_back("sq_sig_all", int64_t(res.sigAll));
    } else if (res.created && res.length) {
        args.emplace_back(res.type == raw::RdmaResource::Cq ? "cqe" : "max_wr",
                          int64_t(res.length));
    }
}

/// A GID as text: eight groups of four hex digits.
std::string gidText(const uint8_t (&gid)[16]) {
    static constexpr char kHex[] = "0123456789abcdef";
    char text[40];
    char* p = text;
    for (int i = 0; i < 16; ++i) {
        *p++ = kHex[gid[i] >> 4];
        *p++ = kHex[gid[i] & 15];
        if (i % 2 == 1 && i < 15) *p++ = ':';
    }
    return std::string(text, size_t(p - text));
}

void addQpStateArgs(const raw::RdmaRecord& r, RdmaRecords::Args& args) {
    const auto& s = r.u.qpState;
    if (s.state < std::size(kQpStates))
        args.emplace_back("qp_state", std::string(kQpStates[s.state]));
    if (s.remoteQpn) args.emplace_back("remote_qpn", int64_t(s.remoteQpn));
    if (s.dlid) args.emplace_back("remote_lid", int64_t(s.dlid));
    if (s.isGlobal) args.emplace_back("remote_gid", gidText(s.gid));
}

} // namespace

std::string_view rdmaOpcodeName(uint8_t opcode) {
    switch (opcode) {
    case 0: return "RDMA_WRITE";
    case 1: return "RDMA_WRITE_WITH_IMM";
    case 2: return "SEND";
    case 3: return "SEND_WITH_IMM";
    case 4: return "RDMA_READ";
    case 5: return "ATOMIC_CMP_AND_SWP";
    case 6: return "ATOMIC_FETCH_AND_ADD";
    case 7: return "LOCAL_INV";
    case 8: return "BIND_MW";
    case 9: return "SEND_WITH_INV";
    case 10: return "TSO";
    case 11: return "DRIVER1";
    case 15: return "ATOMIC_WRITE";
    case 255: return "RECV";
    default: return "OTHER";
    }
}

std::string_view rdmaStatusName(uint8_t status) {
    static constexpr const char* kNames[] = {
        "success",           "loc_len_err",     "loc_qp_op_err",   "loc_eec_op_err",
        "loc_prot_err",      "wr_flush_err",    "mw_bind_err",     "bad_resp_err",
        "loc_access_err",    "rem_inv_req_err", "rem_access_err",  "rem_op_err",
        "retry_exc_err",     "rnr_retry_exc_err", "loc_rdd_viol_err", "rem_inv_rd_req_err",
        "rem_abort_err",     "inv_eecn_err",    "inv_eec_state_err", "fatal_err",
        "resp_timeout_err",  "general_err",     "tm_err",          "tm_rndv_incomplete"};
    return status < std::size(kNames) ? kNames[status] : "unknown";
}

RdmaRecords::RdmaRecords(TraceWriter& w, TicksToTrace toTrace, StringLookup strings,
                         AddStat addStat)
    : m_w(w), m_toTrace(std::move(toTrace)), m_strings(std::move(strings)),
      m_addStat(std::move(addStat)) {}

void RdmaRecords::prepare(std::vector<ThreadRecords>& threads) {
    for (auto& t : threads) {
        auto& records = sectionRecords(t, m_slot);
        if (records.empty()) continue;
        size_t firstCall = t.events.size();
        convertThread(t);
        attribute(t, firstCall);
        records.clear();
        records.shrink_to_fit();
    }
    pairCompletions();
}

// ---- convertThread: one handler per record action --------------------------------------------

/// What the records of one thread carry to those after them.
struct RdmaRecords::ThreadState {
    explicit ThreadState(ThreadRecords& thread) : t(thread) {}
    ThreadRecords& t;
    /// The call the following WR / completion / resource records belong to.
    CallFacts* call = nullptr;
    uint32_t callIndex = 0;
    /// Work requests built through ibv_qp_ex, written before the ibv_wr_complete that posts them.
    std::vector<Wr> batched;
};

void RdmaRecords::convertThread(ThreadRecords& t) {
    ThreadState state(t);
    for (const auto& bytes : sectionRecords(t, m_slot)) {
        raw::RdmaRecord r = recordAs<raw::RdmaRecord>(bytes);
        if (r.action == raw::RdmaAction::PollOne) {
            convert(pollOneCall(r), state);
            convert(pollOneCompletion(r), state);
        } else if (r.action == raw::RdmaAction::PostOne) {
            convert(postOneCall(r), state);
            convert(postOneWr(r), state);
        } else {
            convert(r, state);
        }
    }
}

void RdmaRecords::convert(const raw::RdmaRecord& r, ThreadState& state) {
    switch (r.action) {
    case raw::RdmaAction::Device: takeDevice(r); break;
    case raw::RdmaAction::Port: takePort(r); break;
    case raw::RdmaAction::Resource: takeResource(r, state.call); break;
    case raw::RdmaAction::QpState: takeQpState(r, state.call); break;
    case raw::RdmaAction::Call: takeCall(r, state); break;
    case raw::RdmaAction::SendWr:
    case raw::RdmaAction::RecvWr: takeWorkRequest(r, state); break;
    case raw::RdmaAction::Completion: takeCompletion(r); break;
    case raw::RdmaAction::Aggregate: takeAggregate(r); break;
    case raw::RdmaAction::DeviceClose: break;
    case raw::RdmaAction::PostOne:
    case raw::RdmaAction::PollOne: break; // split by convertThread
    }
}

void RdmaRecords::takeDevice(const raw::RdmaRecord& r) {
    Device& d = m_devices[r.device];
    const std::string* name = m_strings(r.u.device.nameId);
    if (!name && r.u.device.nameId) m_addStat(Stat::UnknownStringRefs, 1);
    d.name = name ? *name : "rdma" + std::to_string(r.device);
    d.eventRate = r.u.device.eventRate;
    if (r.u.device.flags & raw::kRdmaAdopted) m_addStat(Stat::RdmaContextsAdopted, 1);
}

void RdmaRecords::takePort(const raw::RdmaRecord& r) {
    Device& d = m_devices[r.device];
    d.rateMbps = std::max(d.rateMbps, int64_t(r.u.port.rateMbps));
}

void RdmaRecords::takeResource(const raw::RdmaRecord& r, CallFacts* call) {
    const auto& res = r.u.resource;
    if (res.type == raw::RdmaResource::Qp && res.created) {
        Qp& q = m_qps[{r.device, r.qpNum}];
        q.type = res.qpType;
        q.sigAll = res.sigAll;
    }
    if (res.created && (res.type == raw::RdmaResource::Qp || res.type == raw::RdmaResource::Cq) &&
        (res.access & raw::kRdmaExUntracked))
        m_addStat(Stat::RdmaExObjectsUntracked, 1);
    if (call) addResourceArgs(r, call->args);
}

void RdmaRecords::takeQpState(const raw::RdmaRecord& r, CallFacts* call) {
    const auto& s = r.u.qpState;
    Qp& q = m_qps[{r.device, r.qpNum}];
    if (s.rc == 0 && s.remoteQpn) q.remoteQpn = s.remoteQpn;
    if (s.rc == 0 && s.dlid) q.dlid = s.dlid;
    if (call) addQpStateArgs(r, call->args);
}

void RdmaRecords::takeCall(const raw::RdmaRecord& r, ThreadState& state) {
    const auto& c = r.u.call;
    Op op = Op(c.op);
    RawEvent e = spanEvent(c.op, r.ts, c.end);
    bool folded = c.folded != 0;
    e.bytes = isDataPath(op) && !folded && c.rc == 0 ? int64_t(c.bytes) : -1;
    if (folded) {
        e.flags = raw::kFlagFolded;
        e.aux = int64_t(c.folded);
    }
    m_calls.emplace_back();
    state.call = &m_calls.back();
    state.call->tid = state.t.tid;
    state.callIndex = uint32_t(m_calls.size());
    e.seq = state.callIndex;
    e.family = uint8_t(m_slot + 1);
    e.familyIndex = state.callIndex;
    addCallArgs(r, state.call->args);
    // The batch's requests become this call's when it posted them; else dropped.
    if (op == Op::IbvWrComplete || op == Op::IbvWrAbort)
        settleBatch(r, op == Op::IbvWrComplete && c.rc == 0, state);
    if (c.rc > 0) e.status = c.rc;
    state.t.events.push_back(e);
}

// The call's facts: device, QP, request and completion counts, link rate, result.
void RdmaRecords::addCallArgs(const raw::RdmaRecord& r, Args& args) const {
    const auto& c = r.u.call;
    Op op = Op(c.op);
    if (r.device != 0xffff) {
        args.emplace_back("device", int64_t(r.device));
        if (auto d = m_devices.find(r.device); d != m_devices.end())
            args.emplace_back("device_name", d->second.name);
    }
    if (r.qpNum) args.emplace_back("qp_num", int64_t(r.qpNum));
    if (isPost(op)) args.emplace_back("work_requests", int64_t(c.count));
    if (op == Op::IbvWrAbort) args.emplace_back("discarded_work_requests", int64_t(c.count));
    if (isPoll(op) && c.folded == 0) args.emplace_back("completions", int64_t(c.count));
    if (op == Op::IbvOpenDevice)
        if (auto d = m_devices.find(r.device); d != m_devices.end())
            args.emplace_back("link_rate_mbps", d->second.rateMbps);
    if (c.rc != 0) args.emplace_back("result", int64_t(c.rc));
}

// The batched requests of the call's QP (posted together at its start) join m_wrs when the call
// posted them; either way they leave the batch.
void RdmaRecords::settleBatch(const raw::RdmaRecord& r, bool posted, ThreadState& state) {
    auto mine = [&](const Wr& w) {
        return w.device == r.device && w.qpNum == r.qpNum && w.post == r.ts;
    };
    for (Wr& w : state.batched)
        if (posted && mine(w)) {
            w.call = state.callIndex;
            m_wrs.push_back(w);
        }
    std::erase_if(state.batched, mine);
}

void RdmaRecords::takeWorkRequest(const raw::RdmaRecord& r, ThreadState& state) {
    const auto& w = r.u.wr;
    Wr x{};
    x.device = r.device;
    x.qpNum = r.qpNum;
    x.srq = w.srq ? w.remoteAddr : 0;
    x.post = r.ts;
    x.wrId = w.wrId;
    x.bytes = w.bytes;
    x.remoteAddr = w.srq ? 0 : w.remoteAddr;
    x.rkey = w.rkey;
    x.opcode = r.action == raw::RdmaAction::RecvWr ? 255 : w.opcode;
    x.signaled = (w.flags & raw::kRdmaSignaled) != 0;
    x.call = state.callIndex;
    if (w.flags & raw::kRdmaBatched)
        state.batched.push_back(x);
    else
        m_wrs.push_back(x);
}

void RdmaRecords::takeCompletion(const raw::RdmaRecord& r) {
    const auto& c = r.u.wc;
    m_completions.push_back({r.device, r.qpNum, r.ts, c.wrId, c.byteLen, c.status, c.opcode});
}

void RdmaRecords::takeAggregate(const raw::RdmaRecord& r) {
    const auto& a = r.u.aggregate;
    if (a.posted == 0 && a.completed == 0) return; // opened, then its batch was refused
    AgentAggregate x{r.device, r.qpNum & raw::kRdmaQpNumMask,
                     (r.qpNum & raw::kRdmaAggregateReceives) != 0, r.ts,
                     std::max(a.end, r.ts), a.bytes, a.posted, a.completed, {}};
    std::copy(std::begin(a.latency), std::end(a.latency), x.latency);
    m_agentAggregates.push_back(x);
}

// A verbs call made while an MPI / NCCL call was running on the same thread was caused by it
// (the MPI library's transport posts inside MPI_Allreduce, MPI_Wait, ...). The agent records
// calls as they end, so containment on the thread's own timeline decides: no runtime cost.
void RdmaRecords::attribute(ThreadRecords& t, size_t firstCall) {
    struct Span {
        uint64_t start, end;
        const RawEvent* e;
    };
    std::vector<Span> comm;
    for (size_t i = 0; i < firstCall; ++i) {
        const RawEvent& e = t.events[i];
        const schema::OpInfo* info = schema::findOp(e.op);
        if (info && isCommunication(info->category)) comm.push_back({e.start, e.end, &e});
    }
    if (comm.empty()) return;
    std::sort(comm.begin(), comm.end(), [](const Span& a, const Span& b) { return a.start < b.start; });
    for (size_t i = firstCall; i < t.events.size(); ++i) {
        const RawEvent& e = t.events[i];
        auto it = std::upper_bound(comm.begin(), comm.end(), e.start,
                                   [](uint64_t v, const Span& s) { return v < s.start; });
        // The closest earlier start that still contains the call (a few steps back suffices:
        // MPI records only a thread's outermost call, so its spans rarely overlap).
        const Span* found = nullptr;
        for (int back = 0; it != comm.begin() && back < 8; ++back) {
            --it;
            if (it->end >= e.end) {
                found = &*it;
                break;
            }
        }
        if (!found) continue;
        CallFacts& f = m_calls.at(e.seq - 1);
        const RawEvent& c = *found->e;
        f.args.emplace_back("caused_by", std::string(schema::findOp(c.op)->name));
        if (c.commId)
            if (const std::string* key = m_strings(c.commId))
                f.args.emplace_back("caused_by_communicator", *key);
        if (c.flags & raw::kFlagSeqValid) f.args.emplace_back("caused_by_seq", int64_t(c.seq));
    }
}

void RdmaRecords::pairCompletions() {
    // Outstanding WRs per (device, qp, wr_id, is receive) and per (device, SRQ wr_id), in post order.
    using Key = std::tuple<uint16_t, uint32_t, uint64_t, bool>;
    std::map<Key, std::deque<size_t>> open;
    std::map<std::pair<uint16_t, uint64_t>, std::deque<size_t>> srqOpen;
    std::vector<size_t> order(m_wrs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return m_wrs[a].post < m_wrs[b].post; });
    std::stable_sort(m_completions.begin(), m_completions.end(),
                     [](const Completion& a, const Completion& b) { return a.ts < b.ts; });
    size_t next = 0;
    for (const Completion& c : m_completions) {
        for (; next < order.size() && m_wrs[order[next]].post <= c.ts; ++next) {
            const Wr& w = m_wrs[order[next]];
            if (w.srq)
                srqOpen[{w.device, w.wrId}].push_back(order[next]);
            else
                open[{w.device, w.qpNum, w.wrId, w.opcode == 255}].push_back(order[next]);
        }
        bool recv = isRecvCompletion(c.opcode);
        std::deque<size_t>* q = nullptr;
        if (auto it = open.find({c.device, c.qpNum, c.wrId, recv}); it != open.end() && !it->second.empty())
            q = &it->second;
        else if (auto s = srqOpen.find({c.device, c.wrId}); recv && s != srqOpen.end() && !s->second.empty())
            q = &s->second;
        if (!q) {
            m_unmatched.push_back(c);
            continue;
        }
        Wr& w = m_wrs[q->front()];
        q->pop_front();
        w.done = c.ts;
        w.status = c.status;
    }
    m_completions.clear();
}

void RdmaRecords::addArgs(const RawEvent& e, int64_t eventId) {
    if (e.familyIndex == 0 || e.familyIndex > m_calls.size()) return;
    m_w.insertEventArgs(eventId, m_calls[e.familyIndex - 1].args);
}

namespace {

// The agent's last latency bin has no upper bound: it sorts after every bounded one.
constexpr int kOpenBin = 64;

} // namespace

struct RdmaRecords::FoldedBucket {
    int64_t ts = INT64_MAX, end = INT64_MIN; ///< trace ns
    int64_t count = 0, bytes = 0, completed = 0;
    std::map<int, int64_t> bins; ///< log2 of a bin's upper bound in ns (or kOpenBin) -> completions

    void add(int64_t at, int64_t until, int64_t requests, int64_t size) {
        ts = std::min(ts, at);
        end = std::max(end, until);
        count += requests;
        bytes += size;
    }
    void addLatency(int64_t ns) {
        ++completed;
        bins[ns <= 1 ? 0 : std::bit_width(uint64_t(ns - 1))]++;
    }
    /// "le_<ns>ns:count,...": completions per power-of-two bin of post-to-completion time (upper
    /// bound); the agent's open-ended last bin is "gt_<ns>ns".
    std::string histogramText() const {
        std::string out;
        for (const auto& [b, n] : bins) {
            if (!out.empty()) out += ',';
            int log2 = b == kOpenBin ? raw::kRdmaLatencyFirstBinLog2 + raw::kRdmaLatencyBins - 2 : b;
            out += (b == kOpenBin ? "gt_" : "le_") + std::to_string(int64_t(1) << log2) + "ns:" +
                   std::to_string(n);
        }
        return out;
    }
};

void RdmaRecords::addAgentAggregates(const AgentAggregates& aggregates, FoldedBuckets& folded) const {
    for (const AgentAggregate* x : aggregates) {
        int64_t ts = m_toTrace(x->ts);
        FoldedBucket& f = folded[ts / kBucketNs];
        f.add(ts, m_toTrace(x->end), x->posted, int64_t(x->bytes));
        f.completed += x->completed;
        for (int k = 0; k < raw::kRdmaLatencyBins; ++k)
            if (x->latency[k])
                f.bins[k == raw::kRdmaLatencyBins - 1 ? kOpenBin : raw::kRdmaLatencyFirstBinLog2 + k] +=
                    x->latency[k];
    }
}

// Successful completions of no recorded request, on a queue of a QP whose requests the agent
// folded: the completions of folded requests that another thread polled (the posting thread could
// not time them). They count as completed in the aggregate they fall in (or the latest before),
// without a latency.
void RdmaRecords::absorbCompletions(const AgentAggregates& aggregates,
                                    std::vector<const Completion*>& unmatched,
                                    FoldedBuckets& folded) const {
    bool agentQueue[2] = {false, false}; // send queue, receive queue
    for (const AgentAggregate* x : aggregates) agentQueue[x->receives] = true;
    if (folded.empty()) return;
    std::erase_if(unmatched, [&](const Completion* c) {
        if (c->status != 0 || !agentQueue[isRecvCompletion(c->opcode)]) return false;
        int64_t ts = m_toTrace(c->ts);
        auto it = folded.upper_bound(ts / kBucketNs);
        FoldedBucket& f = it == folded.begin() ? it->second : std::prev(it)->second;
        f.completed++;
        f.end = std::max(f.end, ts);
        return true;
    });
}

// ---- writeNicTracks: one lane per (device, QP) and per (device, SRQ) ---------------------------

/// The lanes of a process and what each collects besides its work requests.
struct RdmaRecords::NicLanes {
    using Key = std::tuple<uint16_t, uint32_t, uint64_t>; ///< device, QP (0 for an SRQ), SRQ
    std::map<Key, std::vector<const Wr*>> wrs;
    std::map<std::pair<uint16_t, uint32_t>, AgentAggregates> agentFolded;
    std::map<std::tuple<uint16_t, uint32_t>, std::vector<const Completion*>> stray;
    int64_t foldedInAgent = 0;
    int64_t aggregatedTotal = 0, unmatchedTotal = 0;
};

/// One event of a nic_queue track, with its event_args.
struct RdmaRecords::NicRow {
    EventRow row;
    Args args;
};

Status RdmaRecords::writeNicTracks(int64_t processId, int64_t& lastEnd) {
    NicLanes lanes = collectLanes();
    for (auto& [key, wrs] : lanes.wrs) {
        auto [device, qpNum, srq] = key;
        HPCPROF_RETURN_IF_ERROR(writeLane(processId, device, qpNum, srq, wrs, lanes, lastEnd));
    }
    m_addStat(Stat::RdmaUnmatchedCompletions, lanes.unmatchedTotal);
    m_addStat(Stat::RdmaWorkRequestsAggregated, lanes.aggregatedTotal);
    m_addStat(Stat::RdmaWorkRequestsFoldedInAgent, lanes.foldedInAgent);
    m_wrs.clear();
    m_agentAggregates.clear();
    m_unmatched.clear();
    return m_w.error();
}

RdmaRecords::NicLanes RdmaRecords::collectLanes() const {
    NicLanes lanes;
    for (const Wr& w : m_wrs) lanes.wrs[{w.device, w.srq ? 0 : w.qpNum, w.srq}].push_back(&w);
    for (const AgentAggregate& a : m_agentAggregates) {
        lanes.agentFolded[{a.device, a.qpNum}].push_back(&a);
        lanes.wrs[{a.device, a.qpNum, 0}];
        lanes.foldedInAgent += a.posted;
    }
    for (const Completion& c : m_unmatched) lanes.stray[{c.device, c.qpNum}].push_back(&c);
    for (const auto& [key, cs] : lanes.stray)
        if (!lanes.wrs.count({std::get<0>(key), std::get<1>(key), 0}))
            lanes.wrs[{std::get<0>(key), std::get<1>(key), 0}];
    return lanes;
}

// A lane's rows: its work requests (beyond the device's event rate folded per bucket), the
// buckets folded here and by the agent, the completions of no recorded request.
Status RdmaRecords::writeLane(int64_t processId, uint16_t device, uint32_t qpNum, uint64_t srq,
                              std::vector<const Wr*>& wrs, NicLanes& lanes, int64_t& lastEnd) {
    std::stable_sort(wrs.begin(), wrs.end(),
                     [](const Wr* a, const Wr* b) { return a->post < b->post; });
    FoldedBuckets folded;
    std::vector<NicRow> rows = workRequestRows(device, qpNum, wrs, folded);
    std::vector<const Completion*> unmatched;
    if (auto s = lanes.stray.find({device, qpNum}); s != lanes.stray.end() && !srq)
        unmatched = s->second;
    if (auto a = lanes.agentFolded.find({device, qpNum}); a != lanes.agentFolded.end() && !srq) {
        addAgentAggregates(a->second, folded);
        absorbCompletions(a->second, unmatched, folded);
    }
    lanes.unmatchedTotal += int64_t(unmatched.size());
    lanes.aggregatedTotal += addFoldedRows(folded, rows);
    addUnmatchedRows(unmatched, rows);
    if (rows.empty()) return {};
    std::stable_sort(rows.begin(), rows.end(),
                     [](const NicRow& a, const NicRow& b) { return a.row.ts < b.row.ts; });
    return insertLane(processId, device, qpNum, srq, rows, lastEnd);
}

// Rows of the lane's work requests, in post order; beyond the device's event rate, the rest of
// each bucket goes to `folded`.
std::vector<RdmaRecords::NicRow> RdmaRecords::workRequestRows(uint16_t device, uint32_t qpNum,
                                                              const std::vector<const Wr*>& wrs,
                                                              FoldedBuckets& folded) {
    auto dev = m_devices.find(device);
    uint32_t rate = dev != m_devices.end() ? dev->second.eventRate : 0;
    // Full events per bucket; 0 = unlimited.
    int64_t perBucket = rate ? std::max<int64_t>(1, int64_t(rate) * kBucketNs / 1'000'000'000) : 0;
    auto qp = m_qps.find({device, qpNum});
    const Qp* q = qp != m_qps.end() ? &qp->second : nullptr;
    std::vector<NicRow> rows;
    int64_t bucket = INT64_MIN, inBucket = 0;
    for (const Wr* w : wrs) {
        int64_t ts = m_toTrace(w->post);
        int64_t latency = w->done ? m_toTrace(w->done) - ts : -1;
        if (perBucket) {
            int64_t b = ts / kBucketNs;
            if (b != bucket) {
                bucket = b;
                inBucket = 0;
            }
            if (++inBucket > perBucket) {
                FoldedBucket& f = folded[b];
                f.add(ts, latency > 0 ? ts + latency : ts, 1, int64_t(w->bytes));
                if (latency >= 0) f.addLatency(latency);
                continue;
            }
        }
        rows.push_back(workRequestRow(*w, ts, latency, q));
    }
    return rows;
}

// One work request, posted at `ts` (trace ns), completed `latency` ns later (-1: never seen).
RdmaRecords::NicRow RdmaRecords::workRequestRow(const Wr& w, int64_t ts, int64_t latency,
                                                const Qp* qp) {
    NicRow r;
    r.row.ts = ts;
    r.row.dur = std::max<int64_t>(0, latency);
    r.row.categoryId = int64_t(Category::RdmaWorkRequest);
    r.row.nameId = m_w.internString(rdmaOpcodeName(w.opcode));
    r.row.bytes = int64_t(w.bytes);
    r.args.emplace_back("wr_id", int64_t(w.wrId));
    if (w.qpNum) r.args.emplace_back("qp_num", int64_t(w.qpNum));
    r.args.emplace_back("signaled", int64_t(w.signaled || (qp && qp->sigAll)));
    if (w.done) {
        r.args.emplace_back("latency_ns", latency);
        r.args.emplace_back("status", std::string(rdmaStatusName(w.status)));
    }
    if (w.remoteAddr) {
        r.args.emplace_back("remote_addr", int64_t(w.remoteAddr));
        r.args.emplace_back("rkey", int64_t(w.rkey));
    }
    if (qp && qp->remoteQpn) r.args.emplace_back("remote_qpn", int64_t(qp->remoteQpn));
    if (w.call && w.call <= m_calls.size())
        for (const auto& [k, v] : m_calls[w.call - 1].args)
            if (k.rfind("caused_by", 0) == 0) r.args.emplace_back(k, v);
    return r;
}

// One row per folded bucket; returns the requests they hold.
int64_t RdmaRecords::addFoldedRows(const FoldedBuckets& folded, std::vector<NicRow>& rows) {
    int64_t requests = 0;
    for (const auto& [b, f] : folded) {
        NicRow r;
        r.row.ts = f.ts;
        r.row.dur = std::max<int64_t>(0, f.end - f.ts);
        r.row.categoryId = int64_t(Category::RdmaWorkRequest);
        r.row.nameId = m_w.internString("aggregated work requests");
        r.row.bytes = f.bytes;
        r.row.count = f.count;
        r.args.emplace_back("bucket_ns", kBucketNs);
        r.args.emplace_back("latency_histogram", f.histogramText());
        r.args.emplace_back("completed", f.completed);
        rows.push_back(std::move(r));
        requests += f.count;
    }
    return requests;
}

void RdmaRecords::addUnmatchedRows(const std::vector<const Completion*>& unmatched,
                                   std::vector<NicRow>& rows) {
    for (const Completion* c : unmatched) {
        NicRow r;
        r.row.ts = m_toTrace(c->ts);
        r.row.categoryId = int64_t(Category::RdmaWorkRequest);
        r.row.nameId = m_w.internString("unmatched completion");
        r.row.bytes = int64_t(c->byteLen);
        r.args.emplace_back("wr_id", int64_t(c->wrId));
        r.args.emplace_back("status", std::string(rdmaStatusName(c->status)));
        r.args.emplace_back("wc_opcode", int64_t(c->opcode));
        rows.push_back(std::move(r));
    }
}

// The lane's nic_queue track and its rows (in time order).
Status RdmaRecords::insertLane(int64_t processId, uint16_t device, uint32_t qpNum, uint64_t srq,
                               std::vector<NicRow>& rows, int64_t& lastEnd) {
    auto dev = m_devices.find(device);
    std::string name = dev != m_devices.end() ? dev->second.name : "rdma" + std::to_string(device);
    name += srq ? " SRQ" : " QP " + std::to_string(qpNum);
    int64_t trackId = m_w.insertTrack(processId, std::nullopt, "nic_queue", name, int64_t(device),
                                      srq ? std::optional<int64_t>() : int64_t(qpNum));
    NestingDepth depth;
    int64_t first = 0, last = 0, count = 0;
    for (NicRow& r : rows) {
        r.row.trackId = trackId;
        r.row.depth = depth.next(r.row.ts, r.row.dur);
        int64_t id = m_w.insertEvent(r.row);
        m_w.insertEventArgs(id, r.args);
        if (count == 0) first = id;
        last = id;
        ++count;
        lastEnd = std::max(lastEnd, r.row.ts + r.row.dur);
    }
    return m_w.finishTrack(trackId, first, last, count);
}

} // namespace hpcprof::store

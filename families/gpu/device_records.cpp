// SPDX-License-Identifier: MIT
#include "device_records.hpp"
#include "hpcprof/store/nesting_depth.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hpcprof::store {

namespace raw = schema::raw;
using schema::Category;
using schema::Op;
using schema::Stat;

namespace {

// ncclDataType_t: name and element size (nccl.h, stable since NCCL 2.0; fp8 since 2.24).
struct DataType {
    const char* name;
    int64_t size;
};
constexpr DataType kDataTypes[] = {{"int8", 1},    {"uint8", 1},    {"int32", 4},
                                   {"uint32", 4},  {"int64", 8},    {"uint64", 8},
                                   {"float16", 2}, {"float32", 4},  {"float64", 8},
                                   {"bfloat16", 2}, {"float8e4m3", 1}, {"float8e5m2", 1}};
constexpr const char* kRedOps[] = {"sum", "prod", "max", "min", "avg", "user"};

// CUpti_ActivityMemcpyKind / CUpti_ActivityMemoryKind / CUpti_ActivitySynchronizationType values.
constexpr const char* kCopyKinds[] = {"unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                      "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
constexpr const char* kMemoryKinds[] = {"unknown", "pageable", "pinned",        "device",
                                        "array",   "managed",  "device_static", "managed_static"};
constexpr const char* kSyncTypes[] = {"unknown_synchronize", "event_synchronize",
                                      "stream_wait_event", "stream_synchronize",
                                      "context_synchronize"};

template <size_t N> const char* nameOr(const char* const (&table)[N], size_t i) {
    return i < N ? table[i] : "unknown";
}

bool isNcclKernelName(std::string_view n) {
    return n.find("ncclDevKernel") != std::string_view::npos ||
           n.find("ncclKernel") != std::string_view::npos ||
           n.find("onerank") != std::string_view::npos || n.find("oneRank") != std::string_view::npos;
}

std::string demangle(const std::string& name) {
    if (name.rfind("_Z", 0) != 0) return name;
    int status = 0;
    char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
    if (status != 0 || !d) return name;
    std::string out(d);
    std::free(d);
    return out;
}

/// Bytes this rank sends in an NCCL call (receives: what it receives), from count and type.
std::optional<int64_t> ncclBytes(Op op, uint8_t datatype, uint64_t count, int64_t nranks,
                                 int64_t rank, int32_t root) {
    if (datatype >= std::size(kDataTypes)) return std::nullopt;
    int64_t elem = kDataTypes[datatype].size * int64_t(count);
    int64_t n = nranks > 0 ? nranks : 1;
    switch (op) {
    case Op::NcclReduceScatter:
    case Op::NcclAlltoAll: return elem * n;
    case Op::NcclScatter: return rank == root ? elem * n : elem;
    case Op::NcclAllReduce:
    case Op::NcclBroadcast:
    case Op::NcclBcast:
    case Op::NcclReduce:
    case Op::NcclAllGather:
    case Op::NcclGather:
    case Op::NcclSend:
    case Op::NcclRecv: return elem;
    default: return std::nullopt;
    }
}

bool isCommCreation(Op op) {
    return op == Op::NcclCommInitRank || op == Op::NcclCommInitRankConfig ||
           op == Op::NcclCommInitAll || op == Op::NcclCommInitRankScalable ||
           op == Op::NcclCommSplit;
}

/// Writes `args` as event_arg rows of event `eventId`.

/// "x,y,z" of a grid or block size.
std::string dim3Text(const uint32_t (&d)[3]) {
    return std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]);
}

} // namespace

DeviceRecords::DeviceRecords(TraceWriter& w, const raw::ProcessHeader& h,
                             const TickConverter& clock, ToTrace toTrace, StringLookup strings,
                             AddStat addStat, std::vector<std::string>& warnings)
    : m_w(w), m_h(h), m_clock(clock), m_toTrace(std::move(toTrace)), m_strings(std::move(strings)),
      m_addStat(std::move(addStat)), m_warnings(warnings) {}

uint32_t DeviceRecords::addExtra(Extra&& x) {
    m_extras.push_back(std::move(x));
    return uint32_t(m_extras.size());
}

int64_t DeviceRecords::nameFor(uint32_t stringId, std::string_view fallback) {
    if (stringId) {
        if (const std::string* s = m_strings(stringId)) return m_w.internString(*s);
        m_addStat(Stat::UnknownStringRefs, 1);
    }
    return m_w.internString(fallback);
}

// CUPTI timestamps are CLOCK_MONOTONIC ns; CPU-track events carry raw ticks. Invert the
// process's (affine) tick conversion so API records sort and convert like every other event.
uint64_t DeviceRecords::ticksFor(int64_t ns) const {
    if (m_h.clockKind != raw::ClockKind::Tsc) return uint64_t(ns);
    const uint64_t t0 = m_h.start.ticks;
    const int64_t f0 = m_clock.toLocalNs(t0);
    const double nsPerTick = double(m_clock.toLocalNs(t0 + 1'000'000'000ull) - f0) / 1e9;
    if (nsPerTick <= 0) return uint64_t(ns);
    return t0 + uint64_t(int64_t(double(ns - f0) / nsPerTick + (ns >= f0 ? 0.5 : -0.5)));
}

// ---- prepare: CPU-side records -> events, in a fixed order (it decides the trace's string ids) --

void DeviceRecords::prepare(std::vector<ThreadRecords>& threads) {
    collectGpu(threads);
    const uint64_t endTicks = processEndTicks(threads);
    std::vector<std::pair<int32_t, RawEvent>> moved = cudaApiEvents(threads);
    collectCategoryNames(threads);
    for (auto& t : threads) {
        convertNvtx(t, endTicks);
        convertNcclCalls(t);
    }
    pairStartEnd(threads, endTicks);
    addToCallers(threads, moved);
    dropDrainThreads(threads);
}

// The process's last tick, for ranges still open at the end.
uint64_t DeviceRecords::processEndTicks(const std::vector<ThreadRecords>& threads) const {
    uint64_t endTicks = m_h.start.ticks;
    // Only NVTX and NCCL records open ranges: a process without them (an I/O-only or MPI-only
    // trace) needs no pass over its events (1-2 % of such a conversion's CPU).
    if (std::all_of(threads.begin(), threads.end(),
                    [&](const ThreadRecords& t) { return sectionRecords(t, m_slot).empty(); }))
        return endTicks;
    for (const auto& t : threads) {
        for (const auto& e : t.events) endTicks = std::max(endTicks, e.end);
        for (const auto& d : sectionRecords(t, m_slot))
            if (recordKind(d) == raw::RecordKind::Nvtx)
                endTicks = std::max(endTicks, recordAs<raw::NvtxRecord>(d).ts);
            else if (recordKind(d) == raw::RecordKind::Nccl)
                endTicks = std::max(endTicks, recordAs<raw::NcclRecord>(d).end);
    }
    return endTicks;
}

// CUDA API calls (and the syncs they made) as events of the calling thread (by tid).
std::vector<std::pair<int32_t, RawEvent>>
DeviceRecords::cudaApiEvents(const std::vector<ThreadRecords>& threads) {
    std::vector<std::pair<int32_t, RawEvent>> moved;
    for (const auto& t : threads)
        for (const auto& d : sectionRecords(t, m_slot)) {
            if (recordKind(d) != raw::RecordKind::Gpu) continue;
            auto g = recordAs<raw::GpuRecord>(d);
            if (g.activity == raw::GpuActivity::Api)
                moved.emplace_back(int32_t(g.callerTid), cudaApiEvent(g));
            else if (g.activity == raw::GpuActivity::Sync && m_apiThread.count(g.correlationId))
                moved.emplace_back(m_apiThread[g.correlationId], syncEvent(g));
        }
    return moved;
}

void DeviceRecords::collectCategoryNames(const std::vector<ThreadRecords>& threads) {
    for (const auto& t : threads)
        for (const auto& d : sectionRecords(t, m_slot))
            if (recordKind(d) == raw::RecordKind::Nvtx) {
                auto r = recordAs<raw::NvtxRecord>(d);
                if (r.action != raw::NvtxAction::NameCategory) continue;
                if (const std::string* s = m_strings(r.nameId))
                    m_categoryNames[{domainName(r.domainId), r.category}] = *s;
            }
}

void DeviceRecords::convertNcclCalls(ThreadRecords& t) {
    std::map<uint32_t, NcclCallRef> groupFirst; // group ordinal -> first call in it
    for (const auto& d : sectionRecords(t, m_slot)) {
        if (recordKind(d) != raw::RecordKind::Nccl) continue;
        auto r = recordAs<raw::NcclRecord>(d);
        if (const Extra* converted = convertNccl(t, r)) noteExternalId(r, *converted, groupFirst);
    }
}

// The NCCL call that GPU work of external id r.externalId belongs to: the call itself, or for a
// group's end, the first call of the group.
void DeviceRecords::noteExternalId(const raw::NcclRecord& r, const Extra& x,
                                   std::map<uint32_t, NcclCallRef>& groupFirst) {
    NcclCallRef ref{x.communicatorId.value_or(0), x.seq.value_or(-1)};
    if (r.group && Op(r.op) != Op::NcclGroupEnd && x.communicatorId)
        groupFirst.try_emplace(r.group, ref);
    if (Op(r.op) == Op::NcclGroupEnd) {
        auto it = groupFirst.find(r.group);
        if (it != groupFirst.end() && r.externalId)
            m_ncclByExternal.try_emplace(r.externalId, it->second);
    } else if (r.externalId && x.communicatorId) {
        m_ncclByExternal.try_emplace(r.externalId, ref);
    }
}

// CUDA API calls go to the calling thread's track (created if the thread wrote nothing).
void DeviceRecords::addToCallers(std::vector<ThreadRecords>& threads,
                                 const std::vector<std::pair<int32_t, RawEvent>>& moved) {
    std::unordered_map<int32_t, size_t> byTid;
    for (size_t i = 0; i < threads.size(); ++i) byTid[threads[i].tid] = i;
    for (auto& [tid, e] : moved) {
        auto it = byTid.find(tid);
        if (it == byTid.end()) {
            ThreadRecords t;
            t.tid = tid;
            threads.push_back(std::move(t));
            it = byTid.emplace(tid, threads.size() - 1).first;
        }
        threads[it->second].events.push_back(e);
    }
}

// The CUPTI drain thread carries nothing of its own: no track for it. The section's records are
// all converted now.
void DeviceRecords::dropDrainThreads(std::vector<ThreadRecords>& threads) {
    std::erase_if(threads, [this](const ThreadRecords& t) {
        const auto& records = sectionRecords(t, m_slot);
        if (!t.events.empty() || records.empty()) return false;
        return std::all_of(records.begin(), records.end(),
                           [](const auto& d) { return recordKind(d) == raw::RecordKind::Gpu; });
    });
    for (auto& t : threads) {
        sectionRecords(t, m_slot).clear();
        sectionRecords(t, m_slot).shrink_to_fit();
    }
}

// ---- GPU-side records: correlations, CUPTI's notes, and the activity kept for writeGpuTracks ----

void DeviceRecords::collectGpu(const std::vector<ThreadRecords>& threads) {
    std::vector<uint32_t> gpuCorrelations;
    for (const auto& t : threads)
        for (const auto& d : sectionRecords(t, m_slot))
            if (recordKind(d) == raw::RecordKind::Gpu)
                collectGpuRecord(recordAs<raw::GpuRecord>(d), gpuCorrelations);
    // API records may follow the GPU records they launched in the buffer: check at the end.
    for (uint32_t c : gpuCorrelations)
        if (c == 0 || !m_apiThread.count(c)) m_addStat(Stat::GpuUnmatchedCorrelations, 1);
    // Syncs routed to a GPU track before their API record was seen: move them back to the CPU.
    for (auto& [key, recs] : m_streams)
        std::erase_if(recs, [&](const raw::GpuRecord& g) {
            return g.activity == raw::GpuActivity::Sync && m_apiThread.count(g.correlationId);
        });
}

void DeviceRecords::collectGpuRecord(const raw::GpuRecord& g,
                                     std::vector<uint32_t>& gpuCorrelations) {
    switch (g.activity) {
    case raw::GpuActivity::Api: m_apiThread[g.correlationId] = int32_t(g.callerTid); break;
    case raw::GpuActivity::ExternalCorrelation:
        m_externalToCorr.try_emplace(g.u.ext.externalId, g.correlationId);
        m_corrToExternal[g.correlationId] = g.u.ext.externalId;
        break;
    case raw::GpuActivity::Overhead:
        if (g.end > g.start) m_addStat(Stat::CuptiOverheadNs, int64_t(g.end - g.start));
        break;
    case raw::GpuActivity::Dropped:
        m_addStat(Stat::CuptiRecordsDropped, int64_t(g.u.dropped.count));
        break;
    case raw::GpuActivity::Unavailable: noteCuptiUnavailable(g); break;
    case raw::GpuActivity::Kernel:
    case raw::GpuActivity::Memcpy:
    case raw::GpuActivity::MemcpyPeer:
    case raw::GpuActivity::Memset:
    case raw::GpuActivity::GraphLaunch:
    case raw::GpuActivity::Sync: keepGpuActivity(g, gpuCorrelations); break;
    }
}

void DeviceRecords::noteCuptiUnavailable(const raw::GpuRecord& g) {
    m_addStat(Stat::CuptiUnavailable, 1);
    const std::string* why = m_strings(g.nameId);
    m_warnings.push_back("process " + std::to_string(m_h.pid) + ": CUDA activity not recorded: " +
                         (why ? *why : std::string("CUPTI could not start")));
}

// GPU work for its stream's track; a sync whose API call is known goes to the CPU instead.
void DeviceRecords::keepGpuActivity(const raw::GpuRecord& g,
                                    std::vector<uint32_t>& gpuCorrelations) {
    if (g.start == 0 && g.end == 0) {
        m_addStat(Stat::GpuUntimedRecords, 1);
        return;
    }
    if (g.activity != raw::GpuActivity::Sync) gpuCorrelations.push_back(g.correlationId);
    if (g.activity != raw::GpuActivity::Sync || !m_apiThread.count(g.correlationId))
        m_streams[{g.device, g.stream}].push_back(g);
}

RawEvent DeviceRecords::cudaApiEvent(const raw::GpuRecord& g) {
    RawEvent e = spanEvent(g.op, ticksFor(int64_t(g.start)), ticksFor(int64_t(g.end)));
    Extra x;
    x.nameId = nameFor(g.nameId, schema::findOp(g.op) ? schema::findOp(g.op)->name : "cuda_api");
    x.correlationId = g.correlationId;
    if (g.u.api.result != 0) x.args.emplace_back("result", int64_t(g.u.api.result));
    own(e, addExtra(std::move(x)));
    return e;
}

RawEvent DeviceRecords::syncEvent(const raw::GpuRecord& g) {
    RawEvent e =
        spanEvent(uint16_t(Op::GpuSync), ticksFor(int64_t(g.start)), ticksFor(int64_t(g.end)));
    Extra x;
    x.nameId = m_w.internString(nameOr(kSyncTypes, g.u.sync.syncType));
    x.correlationId = g.correlationId;
    x.args.emplace_back("device", int64_t(g.device));
    if (g.stream != 0xffffffffu) x.args.emplace_back("stream", int64_t(g.stream));
    own(e, addExtra(std::move(x)));
    return e;
}

std::string DeviceRecords::domainName(uint32_t id) const {
    if (id == 0) return {};
    const std::string* s = m_strings(id);
    return s ? *s : std::string("<unknown domain>");
}

RawEvent DeviceRecords::nvtxEvent(const raw::NvtxRecord& begin, uint64_t end, Op op) {
    RawEvent e = spanEvent(uint16_t(op), begin.ts, end);
    Extra x;
    x.nameId = nameFor(begin.nameId, op == Op::NvtxMark ? "nvtx_mark" : "nvtx_range");
    std::string domain = domainName(begin.domainId);
    if (!domain.empty()) x.args.emplace_back("domain", domain);
    if (begin.category) {
        auto it = m_categoryNames.find({domain, begin.category});
        if (it != m_categoryNames.end())
            x.args.emplace_back("nvtx_category", it->second);
        else
            x.args.emplace_back("nvtx_category", int64_t(begin.category));
    }
    if (begin.flags & raw::kNvtxHasColor) x.args.emplace_back("color", int64_t(begin.color));
    if (begin.payloadType) {
        int64_t v = int64_t(begin.payload);
        if (begin.payloadType == 5) v = int32_t(uint32_t(begin.payload)); // int32
        // Floating-point payloads keep their bits: event_arg values are integers or text here.
        x.args.emplace_back((begin.payloadType == 3 || begin.payloadType == 6) ? "payload_bits"
                                                                                : "payload",
                            v);
    }
    own(e, addExtra(std::move(x)));
    return e;
}

void DeviceRecords::convertNvtx(ThreadRecords& t, uint64_t endTicks) {
    // Push/pop pair per (thread, domain name); start/end pair by range id across threads.
    std::map<std::string, std::vector<raw::NvtxRecord>> stacks;
    for (const auto& d : sectionRecords(t, m_slot)) {
        if (recordKind(d) != raw::RecordKind::Nvtx) continue;
        auto r = recordAs<raw::NvtxRecord>(d);
        switch (r.action) {
        case raw::NvtxAction::Push: stacks[domainName(r.domainId)].push_back(r); break;
        case raw::NvtxAction::Pop: {
            auto& st = stacks[domainName(r.domainId)];
            if (st.empty()) {
                m_addStat(Stat::NvtxUnbalancedPops, 1);
                break;
            }
            t.events.push_back(nvtxEvent(st.back(), r.ts, Op::NvtxRange));
            st.pop_back();
            break;
        }
        case raw::NvtxAction::Start: m_openStarts[r.rangeId] = {r, t.tid}; break;
        case raw::NvtxAction::End: m_ends.emplace_back(r.rangeId, r.ts); break;
        case raw::NvtxAction::Mark: t.events.push_back(nvtxEvent(r, r.ts, Op::NvtxMark)); break;
        case raw::NvtxAction::NameCategory: break; // collected up front
        }
    }
    for (auto& [domain, st] : stacks)
        for (const auto& open : st) {
            m_addStat(Stat::NvtxUnclosedRanges, 1);
            t.events.push_back(nvtxEvent(open, endTicks, Op::NvtxRange));
        }
}

void DeviceRecords::pairStartEnd(std::vector<ThreadRecords>& threads, uint64_t endTicks) {
    std::unordered_map<int32_t, ThreadRecords*> byTid;
    for (auto& t : threads) byTid[t.tid] = &t;
    for (const auto& [id, ts] : m_ends) {
        auto it = m_openStarts.find(id);
        if (it == m_openStarts.end()) {
            m_addStat(Stat::NvtxUnbalancedPops, 1);
            continue;
        }
        byTid[it->second.tid]->events.push_back(nvtxEvent(it->second.rec, ts, Op::NvtxRange));
        m_openStarts.erase(it);
    }
    for (const auto& [id, open] : m_openStarts) {
        m_addStat(Stat::NvtxUnclosedRanges, 1);
        byTid[open.tid]->events.push_back(nvtxEvent(open.rec, endTicks, Op::NvtxRange));
    }
    m_openStarts.clear();
    m_ends.clear();
}

// ---- NCCL ----------------------------------------------------------------------------------

const DeviceRecords::Extra* DeviceRecords::convertNccl(ThreadRecords& t, const raw::NcclRecord& r) {
    if (takePluginNote(r)) return nullptr;
    Op op = Op(r.op);
    bool plugin = r.flags & raw::kNcclFromPlugin;
    RawEvent e = spanEvent(r.op, r.start, r.end);
    Extra x;
    CommInfo info = resolveCommunicator(op, r, x);
    if (r.seq != raw::kNoSeq) x.seq = int64_t(r.seq);
    if (plugin) {
        convertPluginFields(op, r, x);
    } else if (isCommCreation(op)) {
        x.args.emplace_back("nranks", int64_t(r.u.init.nranks));
        x.args.emplace_back("comm_rank", int64_t(r.peer));
    } else {
        convertCallFields(op, r, info, x);
    }
    if (r.group && !plugin) x.args.emplace_back("group", int64_t(r.group));
    if (r.result != 0) x.args.emplace_back("result", int64_t(r.result));
    if (r.externalId) {
        auto it = m_externalToCorr.find(r.externalId);
        if (it != m_externalToCorr.end()) x.correlationId = it->second;
    }
    own(e, addExtra(std::move(x)));
    t.events.push_back(e);
    return &m_extras.back();
}

// Profiler-plugin records that are no event: the events it dropped, a communicator's size and
// rank. True when `r` is one (and taken).
bool DeviceRecords::takePluginNote(const raw::NcclRecord& r) {
    if (!(r.flags & raw::kNcclFromPlugin)) return false;
    if (r.flags & raw::kNcclDropped) {
        m_addStat(Stat::NcclPluginEventsDropped, int64_t(r.u.dropped.events));
        return true;
    }
    if (r.flags & raw::kNcclCommInfo) {
        if (const std::string* key = m_strings(r.commKeyId)) {
            m_comms[*key] = {int64_t(r.u.init.nranks), r.peer};
            m_w.internCommunicator(*key, int64_t(r.u.init.nranks), "nccl");
        }
        return true;
    }
    return false;
}

// The communicator of `r` into x.communicatorId (a creation call records its size and this
// rank); its size and this rank as far as known.
DeviceRecords::CommInfo DeviceRecords::resolveCommunicator(Op op, const raw::NcclRecord& r,
                                                           Extra& x) {
    const std::string* key = r.commKeyId ? m_strings(r.commKeyId) : nullptr;
    if (r.commKeyId && !key) m_addStat(Stat::UnknownStringRefs, 1);
    CommInfo info;
    if (!key) return info;
    if (isCommCreation(op) && r.result == 0) m_comms[*key] = {int64_t(r.u.init.nranks), r.peer};
    auto it = m_comms.find(*key);
    if (it != m_comms.end()) info = it->second;
    x.communicatorId = m_w.internCommunicator(
        *key, info.size >= 0 ? std::optional<int64_t>(info.size) : std::nullopt, "nccl");
    return info;
}

// A call the agent's own hooks recorded (collectives, point-to-point, groups, teardown).
void DeviceRecords::convertCallFields(Op op, const raw::NcclRecord& r, const CommInfo& info,
                                      Extra& x) {
    if (auto b = ncclBytes(op, r.datatype, r.u.call.count, info.size, info.rank, r.peer)) x.bytes = *b;
    if (r.peer >= 0) x.peer = r.peer;
    if (r.datatype < std::size(kDataTypes))
        x.args.emplace_back("datatype", std::string(kDataTypes[r.datatype].name));
    if (r.redop != 255) x.args.emplace_back("op", std::string(nameOr(kRedOps, r.redop)));
    bool teardown =
        op == Op::NcclCommFinalize || op == Op::NcclCommDestroy || op == Op::NcclCommAbort;
    if (op != Op::NcclGroupStart && op != Op::NcclGroupEnd && !teardown) {
        x.args.emplace_back("count", int64_t(r.u.call.count));
        x.args.emplace_back("stream", int64_t(r.u.call.stream));
    }
}

// Profiler-plugin records: `group` holds NCCL's function name; the payload member is the op's
// (raw/gpu.hpp, NcclPayload).
void DeviceRecords::convertPluginFields(Op op, const raw::NcclRecord& r, Extra& x) {
    x.args.emplace_back("source", std::string("plugin"));
    if (r.group)
        if (const std::string* func = m_strings(r.group)) x.args.emplace_back("func", *func);
    if (op == Op::NcclPluginProxyOp) {
        x.bytes = int64_t(r.u.proxyOp.bytes);
        x.args.emplace_back("channel", int64_t(r.u.proxyOp.channel));
        x.args.emplace_back("is_send", int64_t(r.isSend));
        if (r.peer >= 0) x.peer = r.peer;
        return;
    }
    if (op == Op::NcclPluginKernelCh) {
        x.args.emplace_back("channel", int64_t(r.u.kernelCh.channel));
        x.args.emplace_back("gpu_timer_start", int64_t(r.u.kernelCh.gpuStartTimer));
        return;
    }
    if (r.peer >= 0) x.peer = r.peer;
    if (op == Op::NcclPluginGroupApi) {
        x.args.emplace_back("group_depth", int64_t(r.u.group.depth));
        return;
    }
    if (op == Op::NcclPluginKernelLaunch) {
        x.args.emplace_back("stream", int64_t(r.u.call.stream));
        return;
    }
    if (op == Op::NcclPluginGroup) return;
    if (r.datatype < std::size(kDataTypes)) {
        x.bytes = kDataTypes[r.datatype].size * int64_t(r.u.call.count);
        x.args.emplace_back("datatype", std::string(kDataTypes[r.datatype].name));
    }
    x.args.emplace_back("count", int64_t(r.u.call.count));
    if (op == Op::NcclPluginCollApi || op == Op::NcclPluginP2pApi)
        x.args.emplace_back("stream", int64_t(r.u.call.stream));
}

void DeviceRecords::decorate(const RawEvent& e, EventRow& row) {
    const Extra& x = m_extras.at(e.familyIndex - 1);
    if (x.nameId) row.nameId = *x.nameId;
    if (x.category) row.categoryId = *x.category;
    if (x.correlationId) row.correlationId = x.correlationId;
    if (x.communicatorId) row.communicatorId = x.communicatorId;
    if (x.seq) row.seq = x.seq;
    if (x.bytes) row.bytes = x.bytes;
    if (x.peer) row.peer = x.peer;
}

void DeviceRecords::addArgs(const RawEvent& e, int64_t eventId) {
    m_w.insertEventArgs(eventId, m_extras.at(e.familyIndex - 1).args);
}

// ---- GPU stream tracks -----------------------------------------------------------------------

Status DeviceRecords::writeGpuTracks(int64_t processId, int64_t& lastEnd) {
    KernelNames kernelNames;
    for (auto& [key, recs] : m_streams) {
        if (recs.empty()) continue;
        HPCPROF_RETURN_IF_ERROR(
            writeGpuStream(processId, key.first, key.second, recs, kernelNames, lastEnd));
    }
    m_streams.clear();
    return m_w.error();
}

Status DeviceRecords::writeGpuStream(int64_t processId, uint32_t device, uint32_t stream,
                                     std::vector<raw::GpuRecord>& recs, KernelNames& kernelNames,
                                     int64_t& lastEnd) {
    std::stable_sort(recs.begin(), recs.end(),
                     [](const raw::GpuRecord& a, const raw::GpuRecord& b) {
                         return a.start < b.start;
                     });
    int64_t trackId = m_w.insertTrack(processId, std::nullopt, "gpu_stream",
                                      "GPU " + std::to_string(device) + " stream " +
                                          std::to_string(stream),
                                      int64_t(device), int64_t(stream));
    NestingDepth depth;
    int64_t first = 0, last = 0, count = 0;
    for (const auto& g : recs) {
        EventRow row;
        row.trackId = trackId;
        Args args;
        if (!gpuRow(g, kernelNames, row, args)) continue;
        row.depth = depth.next(row.ts, row.dur);
        int64_t id = m_w.insertEvent(row);
        m_w.insertEventArgs(id, args);
        if (count == 0) first = id;
        last = id;
        ++count;
        lastEnd = std::max(lastEnd, row.ts + row.dur);
    }
    return m_w.finishTrack(trackId, first, last, count);
}

// The row and event_args of GPU activity `g`; false for activity that has no row.
bool DeviceRecords::gpuRow(const raw::GpuRecord& g, KernelNames& kernelNames, EventRow& row,
                           Args& args) {
    row.ts = m_toTrace(int64_t(g.start));
    row.dur = g.end >= g.start ? int64_t(g.end - g.start) : 0;
    if (g.end < g.start) m_addStat(Stat::NegativeDurations, 1);
    const schema::OpInfo* info = schema::findOp(g.op);
    row.categoryId = int64_t(info ? info->category : Category::GpuKernel);
    if (g.correlationId) row.correlationId = int64_t(g.correlationId);
    switch (g.activity) {
    case raw::GpuActivity::Kernel: describeKernel(g, kernelNames, row, args); break;
    case raw::GpuActivity::Memcpy:
    case raw::GpuActivity::MemcpyPeer: describeCopy(g, row, args); break;
    case raw::GpuActivity::Memset:
        row.nameId = m_w.internString("memset");
        row.bytes = g.u.copy.bytes;
        args.emplace_back("dst_kind", std::string(nameOr(kMemoryKinds, g.u.copy.dstKind)));
        break;
    case raw::GpuActivity::Sync:
        row.nameId = m_w.internString(nameOr(kSyncTypes, g.u.sync.syncType));
        break;
    case raw::GpuActivity::GraphLaunch:
        row.nameId = m_w.internString("cuda_graph " + std::to_string(g.graphId));
        break;
    default: return false;
    }
    if (g.graphId) args.emplace_back("graph_id", int64_t(g.graphId));
    return true;
}

// A kernel: its demangled name, and a communication kernel (with its NCCL call's communicator
// and seq) when its name says so or its launch ties it to an NCCL call.
void DeviceRecords::describeKernel(const raw::GpuRecord& g, KernelNames& kernelNames,
                                   EventRow& row, Args& args) {
    row.nameId = kernelNameId(g.nameId, kernelNames);
    bool comm = m_ncclKernelNames.count(row.nameId) > 0;
    if (const NcclCallRef* call = ncclCallOf(g.correlationId)) {
        comm = true;
        row.communicatorId = call->communicatorId;
        if (call->seq >= 0) row.seq = call->seq;
    }
    if (comm) row.categoryId = int64_t(Category::GpuCommKernel);
    args.emplace_back("grid", dim3Text(g.u.kernel.grid));
    args.emplace_back("block", dim3Text(g.u.kernel.block));
}

// The trace string id of a kernel's demangled name (demangled once per process string id).
int64_t DeviceRecords::kernelNameId(uint32_t nameId, KernelNames& kernelNames) {
    auto it = kernelNames.find(nameId);
    if (it != kernelNames.end()) return it->second;
    const std::string* s = nameId ? m_strings(nameId) : nullptr;
    if (nameId && !s) m_addStat(Stat::UnknownStringRefs, 1);
    std::string name = demangle(s ? *s : std::string("<unknown kernel>"));
    it = kernelNames.emplace(nameId, m_w.internString(name)).first;
    if (isNcclKernelName(name)) m_ncclKernelNames.insert(it->second);
    return it->second;
}

// The NCCL call that launched the GPU work of `correlationId`; nullptr if none is known.
const DeviceRecords::NcclCallRef* DeviceRecords::ncclCallOf(uint32_t correlationId) const {
    auto ext = m_corrToExternal.find(correlationId);
    if (ext == m_corrToExternal.end()) return nullptr;
    auto call = m_ncclByExternal.find(ext->second);
    return call != m_ncclByExternal.end() ? &call->second : nullptr;
}

void DeviceRecords::describeCopy(const raw::GpuRecord& g, EventRow& row, Args& args) {
    const auto& c = g.u.copy;
    row.nameId = m_w.internString(std::string("memcpy ") + nameOr(kCopyKinds, c.copyKind));
    row.bytes = c.bytes;
    args.emplace_back("copy_kind", std::string(nameOr(kCopyKinds, c.copyKind)));
    args.emplace_back("src_kind", std::string(nameOr(kMemoryKinds, c.srcKind)));
    args.emplace_back("dst_kind", std::string(nameOr(kMemoryKinds, c.dstKind)));
    if (g.activity == raw::GpuActivity::MemcpyPeer) {
        args.emplace_back("src_device", int64_t(c.srcDevice));
        args.emplace_back("dst_device", int64_t(c.dstDevice));
    }
}

} // namespace hpcprof::store

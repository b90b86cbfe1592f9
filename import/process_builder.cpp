// SPDX-License-Identifier: MIT
#include "process_builder.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <new>

#include "kineto_mapping.hpp"
#include "hpcprof/store/nesting_depth.hpp"

namespace hpcprof::import {

using schema::Category;
using schema::Stat;

uint8_t copyKindCode(std::string_view kind) {
    for (size_t i = 1; i < std::size(kCopyKinds); ++i)
        if (kind == kCopyKinds[i]) return uint8_t(i);
    return 0;
}

uint8_t memoryKindCode(std::string_view kind) {
    for (size_t i = 1; i < std::size(kMemoryKinds); ++i)
        if (kind == kMemoryKinds[i]) return uint8_t(i);
    return 0;
}

PendingTrack& ProcessBuilder::cpuTrack(int64_t pidKey, int64_t tidKey) {
    std::tuple<bool, int64_t, int64_t> key{false, pidKey, tidKey};
    if (m_lastTrack && key == m_lastKey) return *m_lastTrack;
    auto& slot = m_tracks[key];
    if (!slot) {
        slot = std::make_unique<PendingTrack>();
        slot->tid = tidKey;
        slot->sortKey = pidKey;
    }
    m_lastKey = key;
    m_lastTrack = slot.get();
    return *slot;
}

PendingTrack& ProcessBuilder::gpuTrack(int64_t device, int64_t stream) {
    std::tuple<bool, int64_t, int64_t> key{true, device, stream};
    if (m_lastTrack && key == m_lastKey) return *m_lastTrack;
    auto& slot = m_tracks[key];
    if (!slot) {
        slot = std::make_unique<PendingTrack>();
        slot->gpu = true;
        slot->device = device;
        slot->stream = stream;
        slot->explicitThread = false;
    }
    m_lastKey = key;
    m_lastTrack = slot.get();
    return *slot;
}

EventChunks::Chunk EventChunks::allocateChunk() {
    // Populated at once: one call instead of a page fault every 4 KiB while events arrive
    // (the chunk fills completely unless it is a track's last).
    void* p = ::mmap(nullptr, kChunk * sizeof(PendingEvent), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc(); // as a vector's growth would
    return Chunk(static_cast<PendingEvent*>(p)); // events are constructed by push_back
}

void EventChunks::prefault(void* p, size_t bytes) {
#ifdef MADV_POPULATE_WRITE
    uintptr_t page = uintptr_t(::sysconf(_SC_PAGESIZE));
    uintptr_t from = (uintptr_t(p) + page - 1) & ~(page - 1);
    uintptr_t to = (uintptr_t(p) + bytes) & ~(page - 1);
    if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

void EventChunks::Unmap::operator()(PendingEvent* p) const {
    ::munmap(p, kChunk * sizeof(PendingEvent));
}

int32_t ProcessBuilder::addExtra(EventExtra extra) {
    m_extras.push_back(std::move(extra));
    return int32_t(m_extras.size() - 1);
}

bool ProcessBuilder::empty() const {
    for (const auto& [key, t] : m_tracks)
        if (!t->pending.empty() || !t->events.empty()) return false;
    return true;
}

std::optional<int64_t> ProcessBuilder::minTs() const {
    std::optional<int64_t> best;
    for (const auto& [key, t] : m_tracks)
        for (size_t i = 0; i < t->pending.size(); ++i)
            if (!best || t->pending[i].ts < *best) best = t->pending[i].ts;
    return best;
}

int64_t ProcessBuilder::dropEventsOutside(int64_t lo, int64_t hi) {
    auto inside = [&](const PendingEvent& e) { return e.ts > lo && e.ts + e.dur < hi; };
    int64_t dropped = 0;
    for (auto& [key, t] : m_tracks) {
        bool all = true;
        for (size_t i = 0; i < t->pending.size() && all; ++i) all = inside(t->pending[i]);
        if (all) continue; // the usual case: nothing to copy
        std::vector<PendingEvent> events;
        t->pending.moveTo(events);
        for (const PendingEvent& e : events) {
            if (inside(e))
                t->pending.push_back(e);
            else
                ++dropped;
        }
    }
    return dropped;
}

void ProcessBuilder::resolveFlows(PendingTrack& t) {
    auto& ev = t.events;
    for (const FlowPoint& f : t.flows) {
        PendingEvent* target = nullptr;
        auto it = std::lower_bound(ev.begin(), ev.end(), f.ts,
                                   [](const PendingEvent& e, int64_t ts) { return e.ts < ts; });
        if (f.nextSlice) {
            if (it != ev.end()) target = &*it;
        } else {
            // The deepest enclosing slice: the latest start at or before ts that still covers it.
            auto up = std::upper_bound(ev.begin(), ev.end(), f.ts,
                                       [](int64_t ts, const PendingEvent& e) { return ts < e.ts; });
            for (int steps = 0; up != ev.begin() && steps < 256; ++steps) {
                --up;
                if (up->ts + up->dur >= f.ts) {
                    target = &*up;
                    break;
                }
            }
        }
        if (!target) {
            count(Stat::ImportFlowsUnmatched);
            continue;
        }
        if (target->correlation == kNoValue) target->correlation = f.id;
    }
    t.flows.clear();
    t.flows.shrink_to_fit();
}

void ProcessBuilder::numberCollectives(WrittenProcess& out) {
    struct Ref {
        int64_t ts, end;
        int32_t extra;
    };
    std::vector<Ref> comm;
    for (auto& [key, t] : m_tracks)
        for (const auto& e : t->events)
            if (e.category == uint8_t(Category::GpuCommKernel) && e.extra >= 0)
                comm.push_back({e.ts, e.ts + e.dur, e.extra});
    std::stable_sort(comm.begin(), comm.end(), [](const Ref& a, const Ref& b) { return a.ts < b.ts; });
    std::map<std::string, int64_t> nextSeq;
    for (const Ref& r : comm) {
        EventExtra& x = m_extras[size_t(r.extra)];
        if (!x.communicator.empty() && !x.seq) x.seq = nextSeq[x.communicator]++;
        if (isPointToPoint(x.collective)) continue;
        std::string key = x.communicator.empty() ? "kernel:" + x.collective
                                                 : "communicator:" + x.communicator;
        out.collectiveEnds[key].push_back(r.end);
    }
}

namespace {

void insertArg(store::TraceWriter& w, int64_t id, const std::string& key, const ArgValue& v) {
    switch (v.kind) {
    case ArgValue::Kind::Null: break;
    case ArgValue::Kind::Bool:
    case ArgValue::Kind::Int: w.insertEventArg(id, key, v.i); break;
    case ArgValue::Kind::Real: w.insertEventArg(id, key, v.d); break;
    case ArgValue::Kind::Text: w.insertEventArg(id, key, std::string_view(v.text)); break;
    }
}

/// A track's order: by start, longer first on ties (parents before children), then arrival.
struct StartsBefore {
    bool operator()(const PendingEvent& a, const PendingEvent& b) const {
        if (a.ts != b.ts) return a.ts < b.ts;
        if (a.dur != b.dur) return a.dur > b.dur;
        return a.order < b.order;
    }
};

/// The track's display name: its own, else "GPU d stream s", the thread's name or "thread T".
std::string displayName(const PendingTrack& t) {
    if (!t.name.empty()) return t.name;
    if (t.gpu) return "GPU " + std::to_string(t.device) + " stream " + std::to_string(t.stream);
    return !t.threadName.empty() ? t.threadName : "thread " + std::to_string(t.tid);
}

/// The event row's columns that come from the event's extra facts.
void extraColumns(store::TraceWriter& w, const EventExtra& x, store::EventRow& row) {
    row.peer = x.peer;
    row.seq = x.seq;
    row.count = x.count;
    if (!x.communicator.empty())
        row.communicatorId =
            w.internCommunicator(x.communicator, x.communicatorSize, x.communicatorKind);
    if (!x.object.empty()) row.objectId = w.internObject(w.internString(x.object), x.object);
}

/// Writes one event of track `trackId` (events in start order, for `depth`) and its args;
/// returns its id. Runs for every imported event.
int64_t writeEvent(store::TraceWriter& w, const PendingEvent& e, const EventExtra* x,
                   int64_t trackId, int64_t originNs, store::NestingDepth& depth) {
    store::EventRow row;
    row.trackId = trackId;
    row.ts = e.ts - originNs;
    row.dur = e.dur;
    row.categoryId = e.category;
    row.nameId = e.nameId;
    row.depth = depth.next(e.ts, e.dur);
    if (e.bytes != kNoValue) row.bytes = e.bytes;
    if (e.correlation != kNoValue) row.correlationId = e.correlation;
    if (x) extraColumns(w, *x, row);
    int64_t id = x ? w.insertEvent(row, x->detail) : w.insertEvent(row);
    if (e.copyKind) w.insertEventArg(id, "copy_kind", std::string_view(kCopyKinds[e.copyKind]));
    if (e.srcKind) w.insertEventArg(id, "src_kind", std::string_view(kMemoryKinds[e.srcKind]));
    if (e.dstKind) w.insertEventArg(id, "dst_kind", std::string_view(kMemoryKinds[e.dstKind]));
    if (x)
        for (const auto& [k, v] : x->args) insertArg(w, id, k, v);
    return id;
}

} // namespace

void ProcessBuilder::sortTracks(WrittenProcess& out) {
    for (auto& [key, t] : m_tracks) {
        t->pending.moveTo(t->events);
        // Tracks often arrive in order already; `order` makes the key unique, so a sorted
        // track is left exactly as the sort would leave it.
        if (!std::is_sorted(t->events.begin(), t->events.end(), StartsBefore()))
            std::sort(t->events.begin(), t->events.end(), StartsBefore());
        for (const auto& e : t->events) {
            out.minTs = std::min(out.minTs, e.ts);
            out.maxEnd = std::max(out.maxEnd, e.ts + e.dur);
        }
        if (!t->flows.empty()) resolveFlows(*t);
    }
}

int64_t ProcessBuilder::insertTrack(store::TraceWriter& w, int64_t processId,
                                    const PendingTrack& t) {
    std::optional<int64_t> threadId;
    if (!t.gpu && t.explicitThread) threadId = w.insertThread(processId, t.tid, t.threadName);
    bool withDevice = t.gpu || t.hasDevice;
    std::string kind = !t.kindName.empty() ? t.kindName : t.gpu ? "gpu_stream" : "cpu_thread";
    return w.insertTrack(processId, threadId, kind, displayName(t),
                         withDevice ? std::optional<int64_t>(t.device) : std::nullopt,
                         withDevice ? std::optional<int64_t>(t.stream) : std::nullopt);
}

Status ProcessBuilder::writeTrack(store::TraceWriter& w, int64_t processId, int64_t originNs,
                                  store::NestingDepth& depth, PendingTrack& t,
                                  WrittenProcess& out) {
    int64_t trackId = insertTrack(w, processId, t);
    int64_t first = 0, last = 0, n = 0;
    depth.clear();
    for (const PendingEvent& e : t.events) {
        const EventExtra* x = e.extra >= 0 ? &m_extras[size_t(e.extra)] : nullptr;
        int64_t id = writeEvent(w, e, x, trackId, originNs, depth);
        if (n == 0) first = id;
        last = id;
        ++n;
    }
    out.events += n;
    HPCPROF_RETURN_IF_ERROR(w.finishTrack(trackId, first, last, n));
    t.events.clear();
    t.events.shrink_to_fit();
    return {};
}

Status ProcessBuilder::insertProcess(store::TraceWriter& w, const WrittenProcess& out,
                                     int64_t originNs) {
    bool any = out.minTs <= out.maxEnd;
    store::ProcessRow p;
    p.id = out.processId;
    p.rank = m_facts.rank;
    p.worldSize = m_facts.worldSize;
    p.rankSource = m_facts.rankSource;
    p.host = m_facts.host;
    p.pid = m_facts.pid;
    p.command = m_facts.command;
    p.exe = "";
    p.startTs = any ? out.minTs - originNs : 0;
    p.endTs = any ? out.maxEnd - originNs : 0;
    p.endState = "exited";
    p.clockMethod = "recorded";
    p.rawDir = m_facts.sourceFile;
    return w.insertProcess(p);
}

Result<WrittenProcess> ProcessBuilder::write(store::TraceWriter& w, int64_t processId,
                                             int64_t originNs) {
    WrittenProcess out;
    out.processId = processId;
    out.rank = m_facts.rank;
    out.minTs = INT64_MAX;
    out.maxEnd = INT64_MIN;
    sortTracks(out);
    numberCollectives(out);
    store::NestingDepth depth;
    for (auto& [key, t] : m_tracks)
        HPCPROF_RETURN_IF_ERROR(writeTrack(w, processId, originNs, depth, *t, out));
    m_extras.clear();
    m_extras.shrink_to_fit();
    HPCPROF_RETURN_IF_ERROR(insertProcess(w, out, originNs));
    if (!w.error().ok()) return w.error();
    return out;
}

} // namespace hpcprof::import

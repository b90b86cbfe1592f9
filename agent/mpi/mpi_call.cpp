// SPDX-License-Identifier: MIT
#include "mpi_call.hpp"

#include "hpcprof/schema/raw_format.hpp"

namespace hpcprof::agent::mpi {

namespace raw = schema::raw;

thread_local int t_depth = 0;
thread_local bool t_counted = false;
thread_local uint64_t t_lastSampled = 0;
thread_local PendingPoll t_poll;
const hpcprof_agent_hot_fields* g_hot = nullptr;

namespace {

RealMpi<int (*)(MPI_Datatype, int*)> g_typeSize("PMPI_Type_size");
uint32_t g_typeEpoch = 0;

} // namespace

bool boundarySampleNow(uint32_t trigger, uint64_t ticks) {
    if (!hpcprof_counters_sample_at(trigger, ticks)) return false;
    t_lastSampled = ticks;
    return true;
}

void writePendingPoll() {
    PendingPoll& p = t_poll;
    p.active = false;
    MpiEvent e{Op(p.op)};
    e.commId = p.commId;
    e.count = p.count;
    e.seq = uint32_t(p.also[0]) | uint32_t(p.also[1]) << 16; // raw_format.hpp: kFlagFolded
    record(e, p.start, p.end);
}

void recordCompletion(bool isRecv, uint32_t request, int32_t peer, int32_t tag, int64_t bytes) {
    auto* r = reinterpret_cast<raw::MpiCompletionRecord*>(hpcprof_agent_reserve());
    if (!r) return;
    r->isRecv = isRecv ? 1 : 0;
    r->reserved0 = 0;
    r->request = request;
    r->peer = peer;
    r->tag = tag;
    r->bytes = bytes;
    __atomic_store_n(&r->kind, raw::RecordKind::MpiCompletion, __ATOMIC_RELEASE);
}

void recordUnsuccessfulPoll(Op op, uint32_t commId, uint64_t t0, uint64_t t1) {
    PendingPoll& p = t_poll;
    if (p.active && t0 - p.end < kPollGapTicks) {
        // Progress loops often alternate functions (MUMPS: MPI_Iprobe for new messages, MPI_Test
        // for its sends): one loop, one event, whatever it polls.
        p.end = t1;
        p.count++;
        uint16_t o = uint16_t(op);
        if (o != p.op && o != p.also[0] && o != p.also[1]) {
            if (!p.also[0]) p.also[0] = o;
            else if (!p.also[1]) p.also[1] = o;
        }
        if (commId != p.commId) p.commId = 0;
        return;
    }
    flushPoll();
    p = PendingPoll{true, uint16_t(op), {0, 0}, commId, t0, t1, 1};
}

int64_t typeBytes(MPI_Datatype type, int64_t count) {
    // Programs use a handful of datatypes over and over: remember the last one per thread. A
    // freed type's handle may come back for a different type, so MPI_Type_free (wrapped below)
    // advances an epoch that invalidates every thread's cache.
    static thread_local MPI_Datatype t_lastType __attribute__((tls_model("initial-exec")));
    static thread_local int t_lastSize __attribute__((tls_model("initial-exec"))) = -1;
    static thread_local uint32_t t_lastEpoch __attribute__((tls_model("initial-exec")));
    if (count < 0) return -1;
    uint32_t epoch = __atomic_load_n(&g_typeEpoch, __ATOMIC_ACQUIRE);
    if (t_lastSize >= 0 && t_lastEpoch == epoch &&
        std::memcmp(&t_lastType, &type, sizeof(type)) == 0)
        return int64_t(t_lastSize) * count;
    auto fn = g_typeSize.get();
    int size = 0;
    if (!fn || fn(type, &size) != MPI_SUCCESS || size < 0) return -1;
    t_lastType = type;
    t_lastSize = size;
    t_lastEpoch = epoch;
    return int64_t(size) * count;
}

} // namespace hpcprof::agent::mpi

namespace {
hpcprof::agent::mpi::RealMpi<int (*)(MPI_Datatype*)> g_typeFree("PMPI_Type_free");
} // namespace

// Not recorded: only invalidates the datatype-size caches.
HPCPROF_MPI_EXPORT int MPI_Type_free(MPI_Datatype* type) {
    auto fn = g_typeFree.get();
    if (!fn) return hpcprof::agent::mpi::kNoMpi;
    __atomic_fetch_add(&hpcprof::agent::mpi::g_typeEpoch, 1u, __ATOMIC_ACQ_REL);
    return fn(type);
}
HPCPROF_PMPI_ALIAS(MPI_Type_free)

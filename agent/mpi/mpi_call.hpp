// SPDX-License-Identifier: MIT
// The shape every MPI wrapper shares. Wrappers are exported under both MPI_X and PMPI_X (the
// Fortran and f08 bindings of Open MPI call the C PMPI_X), forward to the real PMPI_X, and
// record only the outermost MPI call of a thread: calls the MPI library makes to itself through
// its public symbols are not the program's.
//
// Polling: consecutive unsuccessful MPI_Test* / MPI_Iprobe calls on a thread, less than
// kPollGapNs apart, fold into one event covering the polling loop, with the number of calls in
// `count`, even when the loop alternates polling functions (the event is named after the first,
// the others are listed). Anything else (another MPI call, a successful poll, a gap) ends the
// fold.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <cstring>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "comm_registry.hpp"
#include "counters/boundary.hpp"
#include "hpcprof/launch/config.hpp"
#include "hpcprof/schema/catalog.hpp"
#include "hpcprof/schema/raw_format.hpp"
#include "mpi_abi.hpp"
#include "real_mpi.hpp"
#include "runtime/agent_abi.hpp"
#include "runtime/in_flight.hpp"

#define HPCPROF_MPI_EXPORT extern "C" __attribute__((visibility("default")))
// PMPI_X is the same function as MPI_X (see the file comment).
#define HPCPROF_PMPI_ALIAS(name)                                                                   \
    extern "C" __attribute__((visibility("default"), alias(#name))) decltype(name) P##name;

namespace hpcprof::agent::mpi {

using schema::Op;

/// What one MPI call is recorded with (raw EventRecord fields; see raw_format.hpp).
struct MpiEvent {
    Op op;
    int64_t bytes = -1;
    int32_t peer = -1;   ///< world rank of the partner, or the root of a rooted collective
    int32_t tag = 0;     ///< p2p: the message tag; collectives and setup: the communicator size
    uint32_t commId = 0; ///< interned communicator key
    uint32_t seq = 0;    ///< collective instance on the communicator
    uint32_t objectId = 0;
    int64_t count = -1;  ///< folded calls (polls), -1 = one call
    uint32_t waitRequests = 0; ///< a wait's request count, published at entry (InFlightCall::requests)
    uint8_t flags = 0;   ///< schema::raw::kFlagSeqValid / kFlagTagIsCommSize
};

/// Gap between two unsuccessful polls above which they are not folded together.
constexpr uint64_t kPollGapTicks = 20'000; // ~10 us at 2 GHz; ticks are close enough for this

extern constinit thread_local int t_depth __attribute__((tls_model("initial-exec")));
/// The outermost call of the thread took a counters sample at its entry (and owes one at exit).
extern constinit thread_local bool t_counted __attribute__((tls_model("initial-exec")));
/// When this thread's MPI calls last had the counters take a boundary sample (raw ticks, 0 =
/// never): the inline check of the minimum gap between samples (boundarySample()).
extern constinit thread_local uint64_t t_lastSampled __attribute__((tls_model("initial-exec")));

/// libhpcprof.so's variables this module reads inline (agent_abi.hpp), asked for once: a
/// recorded call thus makes two calls into libhpcprof.so (its in-flight line, its append)
/// instead of seven.
extern const hpcprof_agent_hot_fields* g_hot;
[[gnu::always_inline]] inline const hpcprof_agent_hot_fields& hot() {
    const hpcprof_agent_hot_fields* h = __atomic_load_n(&g_hot, __ATOMIC_ACQUIRE);
    if (!h) [[unlikely]] {
        h = hpcprof_agent_hot();
        __atomic_store_n(&g_hot, h, __ATOMIC_RELEASE);
    }
    return *h;
}

/// Raw ticks, as hpcprof_agent_now() gives them: read here when they are the TSC.
[[gnu::always_inline]] inline uint64_t ticksNow() {
#if defined(__x86_64__)
    const hpcprof_agent_hot_fields& h = hot();
    if (__atomic_load_n(h.useTsc, __ATOMIC_RELAXED)) [[likely]]
        return __rdtsc() + uint64_t(__atomic_load_n(h.clockSkewTicks, __ATOMIC_RELAXED));
#endif
    return hpcprof_agent_now();
}

/// True when MPI is being recorded (hpcprof_agent_recording(), which starts the agent if it has
/// not started yet, only while it is not recording).
[[gnu::always_inline]] inline bool recordingMpi() {
    const hpcprof_agent_hot_fields& h = hot();
    if (__atomic_load_n(h.state, __ATOMIC_ACQUIRE) != 2) [[unlikely]]
        return hpcprof_agent_recording(uint32_t(agent::SourceBit::Mpi)) != 0;
    return (__atomic_load_n(h.sources, __ATOMIC_RELAXED) & uint32_t(agent::SourceBit::Mpi)) != 0;
}

/// Takes a counters boundary sample at `ticks` unless libhpcprof.so finds one too recent (its
/// samples of other sources count too); true when it sampled.
bool boundarySampleNow(uint32_t trigger, uint64_t ticks);

/// A counters boundary sample at `ticks` (trigger kCounterEnter / kCounterExit), unless this
/// thread's MPI calls had one less than the minimum gap ago: that check is made inline, so that
/// most calls skip the call into libhpcprof.so. True when it sampled.
[[gnu::always_inline]] inline bool boundarySample(uint32_t trigger, uint64_t ticks) {
    uint64_t gap = __atomic_load_n(hot().counterGapTicks, __ATOMIC_RELAXED);
    if (gap != 0 && t_lastSampled != 0 && ticks - t_lastSampled < gap) [[likely]]
        return false;
    return boundarySampleNow(trigger, ticks);
}

/// A polling loop being folded into one event (recordUnsuccessfulPoll()), not yet written.
struct PendingPoll {
    bool active;
    uint16_t op;       ///< the loop's first polling function
    uint16_t also[2];  ///< up to two other polling functions seen in the same loop (0 = none)
    uint32_t commId;   ///< the polled communicator, 0 once the loop polled several
    uint64_t start;
    uint64_t end;
    int64_t count;     ///< polls of every function in the loop
};
extern constinit thread_local PendingPoll t_poll __attribute__((tls_model("initial-exec")));

/// Writes the thread's pending poll (t_poll.active).
void writePendingPoll();

/// Writes a pending folded poll, if any (called at the start of every recorded MPI call).
[[gnu::always_inline]] inline void flushPoll() {
    if (t_poll.active) [[unlikely]]
        writePendingPoll();
}

/// Counts the call in; true when it is the thread's outermost MPI call and MPI is being
/// recorded. Every enter() is paired with a leave(). A poll does not end a pending fold here:
/// the poll wrapper decides once it knows whether the poll succeeded.
///
/// CPU counters are sampled at the entry and exit of every recorded call (HPCPROF_COUNTER_
/// BOUNDARIES, MPI by default), except polls: a polling loop would pay a sample per iteration.
[[gnu::always_inline]] inline bool enter(bool isPoll = false) {
    if (t_depth++ != 0) return false;
    if (!isPoll) flushPoll();
    if (!recordingMpi()) return false;
    t_counted = !isPoll && agent::counters::samplesRegion(agent::counters::kCounterBoundaryMpi);
    return true;
}

/// The start time of a recorded call (after enter()), taking the entry sample of the counters
/// if one is due: the sample's rate check reuses this clock reading, and a sample taken moves
/// the start past it so that the call's time excludes the sampling.
[[gnu::always_inline]] inline uint64_t callStart() {
    uint64_t t = ticksNow();
    if (t_counted && boundarySample(agent::counters::kCounterEnter, t)) [[unlikely]]
        return ticksNow();
    return t;
}

/// Ends what enter() began; `endTicks` (the call's end time, 0 = read it now) serves the exit
/// sample's rate check.
[[gnu::always_inline]] inline void leave(uint64_t endTicks = 0) {
    if (--t_depth == 0 && t_counted) [[unlikely]] {
        t_counted = false;
        boundarySample(agent::counters::kCounterExit, endTicks ? endTicks : ticksNow());
    }
}

/// Writes one event.
[[gnu::always_inline]] inline void record(const MpiEvent& e, uint64_t t0, uint64_t t1) {
    const schema::raw::EventWords r =
        schema::raw::packEvent(uint8_t(e.flags | (e.count >= 0 ? schema::raw::kFlagFolded : 0)),
                               uint16_t(e.op), 0, t0, t1, e.bytes, e.objectId, -1, e.peer, e.tag,
                               e.commId, e.seq, e.count);
    hpcprof_agent_append(&r);
}

/// Writes one completed send/receive request of the wait or test being recorded; must come
/// before that call's record() on the same thread (the store attaches it to the next wait/test).
void recordCompletion(bool isRecv, uint32_t request, int32_t peer, int32_t tag, int64_t bytes);

/// Marks a posting event with its request number (the completion names the same number).
inline void describeRequest(MpiEvent& e, uint32_t request) {
    e.seq = request;
    e.flags |= schema::raw::kFlagRequest;
}

/// An unsuccessful poll: folded into the thread's pending poll event.
void recordUnsuccessfulPoll(Op op, uint32_t commId, uint64_t t0, uint64_t t1);

/// Bytes of `count` elements of `type` (-1 if the size cannot be determined).
int64_t typeBytes(MPI_Datatype type, int64_t count);

/// Publishes `e` (what is known at the call's entry) as the thread's in-flight call, for
/// `hpcprof status` and the unfinished events of a hung or killed process. Returns what
/// finishCall() takes at the call's exit.
[[gnu::always_inline]] inline schema::raw::InFlightCall* publishCall(const MpiEvent& e, uint64_t t0) {
    schema::raw::InFlightCall c{};
    c.op = uint16_t(e.op);
    c.flags = e.flags;
    c.start = t0;
    c.bytes = e.bytes;
    c.objectId = e.objectId;
    c.fd = -1;
    c.peer = e.peer;
    c.tag = e.tag;
    c.commId = e.commId;
    c.instance = e.seq;
    c.aux = -1;
    c.requests = e.waitRequests;
    return agent::publishInFlight(hpcprof_agent_inflight_line(), c);
}

/// Clears what publishCall() published.
inline void finishCall(schema::raw::InFlightCall* line) { agent::clearInFlight(line); }

/// Runs a call and records it: `atEntry(event)` fills in what the arguments say (published while
/// the call runs), `describe(event, rc)` what the call's result adds.
template <typename AtEntry, typename Call, typename Describe>
inline int tracedCallAt(Op op, AtEntry&& atEntry, Call&& call, Describe&& describe) {
    if (!enter()) {
        int rc = call();
        leave();
        return rc;
    }
    uint64_t t0 = callStart();
    MpiEvent e{op};
    atEntry(e);
    schema::raw::InFlightCall* line = publishCall(e, t0);
    int rc = call();
    uint64_t t1 = ticksNow();
    finishCall(line);
    describe(e, rc);
    record(e, t0, t1);
    leave(t1);
    return rc;
}

/// Runs a call and records it with the fields `describe(event, rc)` fills in.
template <typename Call, typename Describe>
inline int tracedCall(Op op, Call&& call, Describe&& describe) {
    return tracedCallAt(op, [](MpiEvent&) {}, call, describe);
}

/// At the entry of a call that waits to hear from `source` (a receive, a blocking probe, a
/// send-receive): the source and tag asked for (-1: any source) and the communicator, what a hang
/// diagnosis and `hpcprof status` name while the call has not returned. Its communicator.
inline CommInfo* awaitSource(MpiEvent& e, MPI_Comm comm, int source, int tag) {
    CommInfo* c = lookupComm(comm);
    e.commId = c ? c->keyId : 0;
    e.peer = source >= 0 ? worldRankOf(c, source) : -1;
    e.tag = tag;
    return c;
}

/// Fills the communicator of a call that reports a status (receive, probe) and the partner and
/// tag the status names: none when the call failed (what awaitSource published at the entry is
/// replaced either way). True when it succeeded.
inline bool describeStatus(MpiEvent& e, const CommInfo* c, int rc, const MPI_Status& st) {
    e.commId = c ? c->keyId : 0;
    e.peer = -1;
    e.tag = 0;
    if (rc != MPI_SUCCESS) return false;
    e.peer = worldRankOf(c, st.MPI_SOURCE); // MPI_PROC_NULL (negative): no peer
    e.tag = st.MPI_TAG;
    return true;
}

/// A non-blocking probe (MPI_Iprobe, MPI_Improbe): an unsuccessful one folds into the thread's
/// polling loop, a successful one is its own event with the source and tag it found, which
/// `onFound(event, comm, status)` may use further. `call(status)` runs the real probe.
template <typename Call, typename OnFound>
inline int tracedProbe(Op op, MPI_Comm comm, int* flag, MPI_Status* status, Call&& call,
                       OnFound&& onFound) {
    if (!enter(true)) {
        int rc = call(status);
        leave();
        return rc;
    }
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    uint64_t t0 = ticksNow();
    int rc = call(st);
    uint64_t t1 = ticksNow();
    CommInfo* c = lookupComm(comm);
    uint32_t commId = c ? c->keyId : 0;
    if (rc == MPI_SUCCESS && flag && !*flag) {
        recordUnsuccessfulPoll(op, commId, t0, t1);
    } else {
        flushPoll();
        MpiEvent e{op};
        if (describeStatus(e, c, rc, *st)) onFound(e, c, *st);
        record(e, t0, t1);
    }
    leave();
    return rc;
}

/// Next collective instance number on `info`. MPI forbids two threads from running collectives
/// on one communicator at the same time, so a plain increment suffices (no locked instruction).
inline uint32_t nextSeq(CommInfo* info) {
    if (!info) return 0;
    uint32_t seq = __atomic_load_n(&info->collectives, __ATOMIC_RELAXED);
    __atomic_store_n(&info->collectives, seq + 1, __ATOMIC_RELAXED);
    return seq;
}

/// Fills the communicator fields of a collective event.
inline void describeCollective(MpiEvent& e, CommInfo* info, uint32_t seq) {
    if (!info) return;
    e.commId = info->keyId;
    e.seq = seq;
    e.tag = info->size;
    e.flags = schema::raw::kFlagSeqValid | schema::raw::kFlagTagIsCommSize;
}

/// The MPI error returned when the real implementation cannot be found.
constexpr int kNoMpi = MPI_ERR_INTERN;

} // namespace hpcprof::agent::mpi

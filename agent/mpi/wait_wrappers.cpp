// SPDX-License-Identifier: MIT
// Completion calls: waits (blocking: the time is what the rank waited) and tests (polls: folded
// when unsuccessful). A completed request reports the transfer it finished: peer, bytes (for
// receives, what arrived) and tag; for calls completing several requests, tag = how many
// completed, bytes = their sum and peer = their common peer (-1 if they differ). Each completed
// send or receive is also written as an MpiCompletionRecord (request number, actual source,
// tag, bytes) just before the call's event, which the store turns into mpi_completion rows.
#include "mpi_abi.hpp"
#include "mpi_call.hpp"
#include "request_registry.hpp"

#include <algorithm>

using namespace hpcprof::agent::mpi;

namespace hpcprof::agent::mpi {
int64_t receivedBytes(const MPI_Status* status, MPI_Datatype type);
}

namespace {

constexpr int kMaxTracked = 1024; // requests per call whose details are reported

RealMpi<int (*)(MPI_Request*, MPI_Status*)> g_wait("PMPI_Wait");
RealMpi<int (*)(MPI_Request*, int*, MPI_Status*)> g_test("PMPI_Test");
RealMpi<int (*)(int, MPI_Request[], int*, MPI_Status*)> g_waitany("PMPI_Waitany");
RealMpi<int (*)(int, MPI_Request[], int*, int*, MPI_Status*)> g_testany("PMPI_Testany");
RealMpi<int (*)(int, MPI_Request[], MPI_Status[])> g_waitall("PMPI_Waitall");
RealMpi<int (*)(int, MPI_Request[], int*, MPI_Status[])> g_testall("PMPI_Testall");
RealMpi<int (*)(int, MPI_Request[], int*, int[], MPI_Status[])> g_waitsome("PMPI_Waitsome"),
    g_testsome("PMPI_Testsome");

constexpr int kLookedFirst = 4;  // requests a wait's entry looks at when no receive is pending
constexpr int kLookedMost = 64;  // ... at most when some receive is (see describeWaitTarget)

/// The pending send or receive `r` is, or nullptr (null, unknown, collective, other).
const RequestInfo* transferOf(MPI_Request r) {
    const RequestInfo* info = r == nullRequest() ? nullptr : pendingRequest(r);
    if (!info || (info->kind != RequestKind::Recv && info->kind != RequestKind::Send)) return nullptr;
    return info;
}

/// The index of the k-th request a wait's entry looks at among `count` (k < count): the first,
/// the last, the second, the second to last, then the middle ones in array order.
int lookedAt(int k, int count) {
    if (k == 0) return 0;
    if (k == 1) return count - 1;
    if (k == 2) return 1;
    if (k == 3) return count - 2;
    return k - 2; // 2 .. count - 3
}

/// At a wait's entry: what it waits for, for the in-flight line (`hpcprof status`, the hang
/// diagnosis' wait chains): peer, tag, communicator and bytes of a pending receive among `reqs`,
/// else of a pending send, and how many requests. Looks at the requests in the order first,
/// last, second, second to last, then the middle ones, and stops at the first receive, where
/// programs put them (posted early: first; sends then receives: last; one of each per neighbour:
/// within the first two). When the process has no receive pending at all (the registry's
/// count), none of `reqs` is one: the first send found among the first four is the answer.
/// Otherwise the look goes on through the middle, up to kLookedMost requests (a halo exchange
/// whose receives lie between its sends). Each look is a table look-up: a bounded cost whatever
/// the count.
void describeWaitTarget(MpiEvent& e, int count, const MPI_Request* reqs) {
    if (count <= 0 || !reqs) return;
    e.waitRequests = uint32_t(count);
    const bool receivePending = pendingReceives() > 0;
    const int limit = std::min(count, receivePending ? kLookedMost : kLookedFirst);
    const RequestInfo* chosen = nullptr;
    for (int k = 0; k < limit; ++k) {
        const RequestInfo* info = transferOf(reqs[lookedAt(k, count)]);
        if (!info) continue;
        if (!chosen || info->kind == RequestKind::Recv) chosen = info;
        if (info->kind == RequestKind::Recv || !receivePending) break;
    }
    if (!chosen) return;
    e.peer = chosen->peer;
    e.tag = chosen->tag;
    e.commId = chosen->commId;
    e.bytes = chosen->bytes;
}

/// Accumulates the completed requests of one call into its event.
struct Completion {
    MpiEvent& e;
    int completed = 0;
    int64_t bytes = 0;
    bool bytesKnown = false;

    /// Starts from a clean event: what the entry published describes the wait, not its result.
    explicit Completion(MpiEvent& ev) : e(ev) {
        e.peer = -1;
        e.tag = 0;
        e.commId = 0;
        e.bytes = -1;
    }

    void add(MPI_Request old, const MPI_Status* status) {
        RequestInfo info;
        if (!takeRequest(old, info)) return;
        int peer = info.peer;
        int tag = info.tag;
        int64_t bytes = info.bytes;
        if (info.kind == RequestKind::Recv && status) {
            peer = worldRankOf(static_cast<const CommInfo*>(info.comm), status->MPI_SOURCE);
            tag = status->MPI_TAG;
            bytes = receivedBytes(status, info.datatype);
        }
        // Which posted call finished, so the analyzer can match it to its partner.
        if (info.kind == RequestKind::Send || info.kind == RequestKind::Recv)
            recordCompletion(info.kind == RequestKind::Recv, info.request, peer, tag, bytes);
        e.peer = completed == 0 ? peer : (e.peer == peer ? peer : -1);
        e.commId = completed == 0 ? info.commId : (e.commId == info.commId ? info.commId : 0);
        if (bytes >= 0) {
            this->bytes += bytes;
            bytesKnown = true;
        }
        ++completed;
    }
    void finish(int requests) {
        e.tag = requests;
        if (bytesKnown) e.bytes = bytes;
    }
};

/// Copies of the request handles before the call (MPI overwrites completed ones).
struct SavedRequests {
    MPI_Request handles[kMaxTracked];
    bool valid = false;
    SavedRequests(int count, const MPI_Request* reqs) {
        if (count <= 0 || count > kMaxTracked || !reqs) return;
        for (int i = 0; i < count; ++i) handles[i] = reqs[i];
        valid = true;
    }
};

/// A status array to use when the caller passed MPI_STATUSES_IGNORE (receive sizes need one).
MPI_Status* statusesFor(MPI_Status* given, int count, MPI_Status* local) {
    if (given != statusesIgnore()) return given;
    return count <= kMaxTracked ? local : given;
}

// Shared body of the polls: unsuccessful ones fold, successful ones are recorded in full.
template <typename Call, typename Describe>
int pollCall(Op op, Call&& call, Describe&& describe) {
    if (!enter(true)) {
        int rc = call();
        leave();
        return rc;
    }
    uint64_t t0 = callStart();
    bool done = false;
    int rc = call(&done);
    uint64_t t1 = ticksNow();
    if (rc == MPI_SUCCESS && !done) {
        recordUnsuccessfulPoll(op, 0, t0, t1);
    } else {
        flushPoll();
        MpiEvent e{op};
        describe(e);
        record(e, t0, t1);
    }
    leave();
    return rc;
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Wait(MPI_Request* req, MPI_Status* status) {
    auto fn = g_wait.get();
    if (!fn) return kNoMpi;
    MPI_Request old = req ? *req : nullRequest();
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    return tracedCallAt(
        Op::MpiWait, [&](MpiEvent& e) { describeWaitTarget(e, 1, &old); },
        [&] { return fn(req, st); }, [&](MpiEvent& e, int) {
        Completion c{e};
        c.add(old, st);
        c.finish(1);
    });
}
HPCPROF_PMPI_ALIAS(MPI_Wait)

HPCPROF_MPI_EXPORT int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
    auto fn = g_test.get();
    if (!fn) return kNoMpi;
    MPI_Request old = req ? *req : nullRequest();
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    return pollCall(
        Op::MpiTest,
        [&](bool* done = nullptr) {
            int rc = fn(req, flag, st);
            if (done) *done = *flag != 0;
            return rc;
        },
        [&](MpiEvent& e) {
            Completion c{e};
            c.add(old, st);
            c.finish(1);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Test)

HPCPROF_MPI_EXPORT int MPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
    auto fn = g_waitany.get();
    if (!fn) return kNoMpi;
    SavedRequests saved(count, reqs);
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    return tracedCallAt(Op::MpiWaitany, [&](MpiEvent& e) { describeWaitTarget(e, count, reqs); },
                      [&] { return fn(count, reqs, index, st); },
                      [&](MpiEvent& e, int) {
                          Completion c{e};
                          if (saved.valid && *index >= 0 && *index < count)
                              c.add(saved.handles[*index], st);
                          c.finish(1);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Waitany)

HPCPROF_MPI_EXPORT int MPI_Testany(int count, MPI_Request reqs[], int* index, int* flag,
                                   MPI_Status* status) {
    auto fn = g_testany.get();
    if (!fn) return kNoMpi;
    SavedRequests saved(count, reqs);
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    return pollCall(
        Op::MpiTestany,
        [&](bool* done = nullptr) {
            int rc = fn(count, reqs, index, flag, st);
            if (done) *done = *flag != 0;
            return rc;
        },
        [&](MpiEvent& e) {
            Completion c{e};
            if (saved.valid && *index >= 0 && *index < count) c.add(saved.handles[*index], st);
            c.finish(1);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Testany)

HPCPROF_MPI_EXPORT int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
    auto fn = g_waitall.get();
    if (!fn) return kNoMpi;
    SavedRequests saved(count, reqs);
    MPI_Status local[kMaxTracked];
    MPI_Status* st = statusesFor(statuses, count, local);
    return tracedCallAt(
        Op::MpiWaitall, [&](MpiEvent& e) { describeWaitTarget(e, count, reqs); },
        [&] { return fn(count, reqs, st); }, [&](MpiEvent& e, int) {
        Completion c{e};
        if (saved.valid)
            for (int i = 0; i < count; ++i)
                c.add(saved.handles[i], st != statusesIgnore() ? &st[i] : nullptr);
        c.finish(count);
    });
}
HPCPROF_PMPI_ALIAS(MPI_Waitall)

HPCPROF_MPI_EXPORT int MPI_Testall(int count, MPI_Request reqs[], int* flag,
                                   MPI_Status statuses[]) {
    auto fn = g_testall.get();
    if (!fn) return kNoMpi;
    SavedRequests saved(count, reqs);
    MPI_Status local[kMaxTracked];
    MPI_Status* st = statusesFor(statuses, count, local);
    return pollCall(
        Op::MpiTestall,
        [&](bool* done = nullptr) {
            int rc = fn(count, reqs, flag, st);
            if (done) *done = *flag != 0;
            return rc;
        },
        [&](MpiEvent& e) {
            Completion c{e};
            if (saved.valid)
                for (int i = 0; i < count; ++i)
                    c.add(saved.handles[i], st != statusesIgnore() ? &st[i] : nullptr);
            c.finish(count);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Testall)

HPCPROF_MPI_EXPORT int MPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                                    MPI_Status statuses[]) {
    auto fn = g_waitsome.get();
    if (!fn) return kNoMpi;
    SavedRequests saved(incount, reqs);
    MPI_Status local[kMaxTracked];
    MPI_Status* st = statusesFor(statuses, incount, local);
    return tracedCallAt(Op::MpiWaitsome, [&](MpiEvent& e) { describeWaitTarget(e, incount, reqs); },
                      [&] { return fn(incount, reqs, outcount, indices, st); },
                      [&](MpiEvent& e, int) {
                          Completion c{e};
                          int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
                          if (saved.valid)
                              for (int i = 0; i < n; ++i)
                                  c.add(saved.handles[indices[i]],
                                        st != statusesIgnore() ? &st[i] : nullptr);
                          c.finish(n);
                      });
}
HPCPROF_PMPI_ALIAS(MPI_Waitsome)

HPCPROF_MPI_EXPORT int MPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[],
                                    MPI_Status statuses[]) {
    auto fn = g_testsome.get();
    if (!fn) return kNoMpi;
    SavedRequests saved(incount, reqs);
    MPI_Status local[kMaxTracked];
    MPI_Status* st = statusesFor(statuses, incount, local);
    return pollCall(
        Op::MpiTestsome,
        [&](bool* done = nullptr) {
            int rc = fn(incount, reqs, outcount, indices, st);
            if (done) *done = *outcount != 0 && *outcount != MPI_UNDEFINED;
            return rc;
        },
        [&](MpiEvent& e) {
            Completion c{e};
            int n = *outcount == MPI_UNDEFINED ? 0 : *outcount;
            if (saved.valid)
                for (int i = 0; i < n; ++i)
                    c.add(saved.handles[indices[i]], st != statusesIgnore() ? &st[i] : nullptr);
            c.finish(n);
        });
}
HPCPROF_PMPI_ALIAS(MPI_Testsome)

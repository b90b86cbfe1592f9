// SPDX-License-Identifier: MIT
// One-sided basics (windows, put/get/accumulate, fence, lock/unlock) and MPI-IO reads and writes
// (class io, object = the file name). RMA: peer = the target's world rank, bytes = origin data.
#include <cstring>

#include "handle_map.hpp"
#include "mpi_abi.hpp"
#include "mpi_call.hpp"

using namespace hpcprof::agent::mpi;

namespace hpcprof::agent::mpi {
int64_t receivedBytes(const MPI_Status* status, MPI_Datatype type);
}

namespace {

HandleMap<1024> g_windows; // window -> CommInfo* of its communicator
HandleMap<4096> g_files;   // file -> interned name

RealMpi<int (*)(void*, MPI_Aint, int, MPI_Info, MPI_Comm, MPI_Win*)> g_winCreate("PMPI_Win_create");
RealMpi<int (*)(MPI_Aint, int, MPI_Info, MPI_Comm, void*, MPI_Win*)> g_winAllocate(
    "PMPI_Win_allocate");
RealMpi<int (*)(MPI_Win*)> g_winFree("PMPI_Win_free");
using PutFn = int (*)(const void*, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Win);
RealMpi<PutFn> g_put("PMPI_Put");
RealMpi<int (*)(void*, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Win)> g_get(
    "PMPI_Get");
RealMpi<int (*)(const void*, int, MPI_Datatype, int, MPI_Aint, int, MPI_Datatype, MPI_Op, MPI_Win)>
    g_accumulate("PMPI_Accumulate");
RealMpi<int (*)(int, MPI_Win)> g_winFence("PMPI_Win_fence");
RealMpi<int (*)(int, int, int, MPI_Win)> g_winLock("PMPI_Win_lock");
RealMpi<int (*)(int, MPI_Win)> g_winUnlock("PMPI_Win_unlock");

RealMpi<int (*)(MPI_Comm, const char*, int, MPI_Info, MPI_File*)> g_fileOpen("PMPI_File_open");
RealMpi<int (*)(MPI_File*)> g_fileClose("PMPI_File_close");
RealMpi<int (*)(MPI_File)> g_fileSync("PMPI_File_sync");
using ReadFn = int (*)(MPI_File, void*, int, MPI_Datatype, MPI_Status*);
using WriteFn = int (*)(MPI_File, const void*, int, MPI_Datatype, MPI_Status*);
using ReadAtFn = int (*)(MPI_File, MPI_Offset, void*, int, MPI_Datatype, MPI_Status*);
using WriteAtFn = int (*)(MPI_File, MPI_Offset, const void*, int, MPI_Datatype, MPI_Status*);
RealMpi<ReadFn> g_fileRead("PMPI_File_read"), g_fileReadAll("PMPI_File_read_all");
RealMpi<WriteFn> g_fileWrite("PMPI_File_write"), g_fileWriteAll("PMPI_File_write_all");
RealMpi<ReadAtFn> g_fileReadAt("PMPI_File_read_at"), g_fileReadAtAll("PMPI_File_read_at_all");
RealMpi<WriteAtFn> g_fileWriteAt("PMPI_File_write_at"),
    g_fileWriteAtAll("PMPI_File_write_at_all");

CommInfo* windowComm(MPI_Win win) {
    uint64_t v = 0;
    return g_windows.get(handleBits(win), v) ? reinterpret_cast<CommInfo*>(v) : nullptr;
}

uint32_t fileName(MPI_File fh) {
    uint64_t v = 0;
    return g_files.get(handleBits(fh), v) ? uint32_t(v) : 0;
}

template <typename Call> int windowCreate(Op op, MPI_Comm comm, MPI_Win* win, Call&& call) {
    CommInfo* c = lookupComm(comm);
    int rc = tracedCall(op, call, [&](MpiEvent& e, int) {
        if (c) {
            e.commId = c->keyId;
            e.tag = c->size;
            e.flags = hpcprof::schema::raw::kFlagTagIsCommSize;
        }
    });
    if (rc == MPI_SUCCESS && win) g_windows.put(handleBits(*win), reinterpret_cast<uint64_t>(c));
    return rc;
}

template <typename Call>
int rmaTransfer(Op op, MPI_Win win, int target, int64_t bytes, Call&& call) {
    return tracedCall(op, call, [&](MpiEvent& e, int) {
        CommInfo* c = windowComm(win);
        e.peer = worldRankOf(c, target);
        e.commId = c ? c->keyId : 0;
        e.bytes = bytes;
    });
}

// MPI-IO data calls: bytes from the status when the implementation fills it, else requested.
template <typename Call>
int fileTransfer(Op op, MPI_File fh, int count, MPI_Datatype type, MPI_Status* status, Call&& call) {
    MPI_Status local;
    MPI_Status* st = status == statusIgnore() ? &local : status;
    return tracedCall(op, [&] { return call(st); }, [&](MpiEvent& e, int rc) {
        e.objectId = fileName(fh);
        if (rc != MPI_SUCCESS) return;
        int64_t got = receivedBytes(st, type);
        e.bytes = got >= 0 ? got : typeBytes(type, count);
    });
}

} // namespace

HPCPROF_MPI_EXPORT int MPI_Win_create(void* base, MPI_Aint size, int disp, MPI_Info info,
                                      MPI_Comm comm, MPI_Win* win) {
    auto fn = g_winCreate.get();
    if (!fn) return kNoMpi;
    return windowCreate(Op::MpiWinCreate, comm, win,
                        [&] { return fn(base, size, disp, info, comm, win); });
}
HPCPROF_PMPI_ALIAS(MPI_Win_create)

HPCPROF_MPI_EXPORT int MPI_Win_allocate(MPI_Aint size, int disp, MPI_Info info, MPI_Comm comm,
                                        void* base, MPI_Win* win) {
    auto fn = g_winAllocate.get();
    if (!fn) return kNoMpi;
    return windowCreate(Op::MpiWinAllocate, comm, win,
                        [&] { return fn(size, disp, info, comm, base, win); });
}
HPCPROF_PMPI_ALIAS(MPI_Win_allocate)

HPCPROF_MPI_EXPORT int MPI_Win_free(MPI_Win* win) {
    auto fn = g_winFree.get();
    if (!fn) return kNoMpi;
    MPI_Win old = *win;
    CommInfo* c = windowComm(old);
    int rc = tracedCall(Op::MpiWinFree, [&] { return fn(win); }, [&](MpiEvent& e, int) {
        if (c) e.commId = c->keyId;
    });
    g_windows.erase(handleBits(old));
    return rc;
}
HPCPROF_PMPI_ALIAS(MPI_Win_free)

HPCPROF_MPI_EXPORT int MPI_Put(const void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp,
                               int tc, MPI_Datatype tt, MPI_Win win) {
    auto fn = g_put.get();
    if (!fn) return kNoMpi;
    return rmaTransfer(Op::MpiPut, win, target, typeBytes(ot, oc),
                       [&] { return fn(o, oc, ot, target, disp, tc, tt, win); });
}
HPCPROF_PMPI_ALIAS(MPI_Put)

HPCPROF_MPI_EXPORT int MPI_Get(void* o, int oc, MPI_Datatype ot, int target, MPI_Aint disp, int tc,
                               MPI_Datatype tt, MPI_Win win) {
    auto fn = g_get.get();
    if (!fn) return kNoMpi;
    return rmaTransfer(Op::MpiGet, win, target, typeBytes(ot, oc),
                       [&] { return fn(o, oc, ot, target, disp, tc, tt, win); });
}
HPCPROF_PMPI_ALIAS(MPI_Get)

HPCPROF_MPI_EXPORT int MPI_Accumulate(const void* o, int oc, MPI_Datatype ot, int target,
                                      MPI_Aint disp, int tc, MPI_Datatype tt, MPI_Op op,
                                      MPI_Win win) {
    auto fn = g_accumulate.get();
    if (!fn) return kNoMpi;
    return rmaTransfer(Op::MpiAccumulate, win, target, typeBytes(ot, oc),
                       [&] { return fn(o, oc, ot, target, disp, tc, tt, op, win); });
}
HPCPROF_PMPI_ALIAS(MPI_Accumulate)

HPCPROF_MPI_EXPORT int MPI_Win_fence(int assertion, MPI_Win win) {
    auto fn = g_winFence.get();
    if (!fn) return kNoMpi;
    // A fence is collective over the window's communicator: numbered like a collective.
    CommInfo* c = windowComm(win);
    if (!enter()) {
        int rc = fn(assertion, win);
        leave();
        return rc;
    }
    uint32_t seq = nextSeq(c);
    uint64_t t0 = callStart();
    int rc = fn(assertion, win);
    uint64_t t1 = ticksNow();
    MpiEvent e{Op::MpiWinFence};
    describeCollective(e, c, seq);
    e.bytes = 0;
    record(e, t0, t1);
    leave(t1);
    return rc;
}
HPCPROF_PMPI_ALIAS(MPI_Win_fence)

HPCPROF_MPI_EXPORT int MPI_Win_lock(int type, int target, int assertion, MPI_Win win) {
    auto fn = g_winLock.get();
    if (!fn) return kNoMpi;
    return rmaTransfer(Op::MpiWinLock, win, target, -1,
                       [&] { return fn(type, target, assertion, win); });
}
HPCPROF_PMPI_ALIAS(MPI_Win_lock)

HPCPROF_MPI_EXPORT int MPI_Win_unlock(int target, MPI_Win win) {
    auto fn = g_winUnlock.get();
    if (!fn) return kNoMpi;
    return rmaTransfer(Op::MpiWinUnlock, win, target, -1, [&] { return fn(target, win); });
}
HPCPROF_PMPI_ALIAS(MPI_Win_unlock)

HPCPROF_MPI_EXPORT int MPI_File_open(MPI_Comm comm, const char* name, int amode, MPI_Info info,
                                     MPI_File* fh) {
    auto fn = g_fileOpen.get();
    if (!fn) return kNoMpi;
    uint32_t nameId = 0;
    int rc = tracedCall(Op::MpiFileOpen, [&] { return fn(comm, name, amode, info, fh); },
                        [&](MpiEvent& e, int) {
                            nameId = name ? hpcprof_agent_intern(name, std::strlen(name)) : 0;
                            e.objectId = nameId;
                        });
    if (rc == MPI_SUCCESS && fh) {
        if (!nameId && name) nameId = hpcprof_agent_intern(name, std::strlen(name));
        g_files.put(handleBits(*fh), nameId);
    }
    return rc;
}
HPCPROF_PMPI_ALIAS(MPI_File_open)

HPCPROF_MPI_EXPORT int MPI_File_close(MPI_File* fh) {
    auto fn = g_fileClose.get();
    if (!fn) return kNoMpi;
    MPI_File old = *fh;
    int rc = tracedCall(Op::MpiFileClose, [&] { return fn(fh); },
                        [&](MpiEvent& e, int) { e.objectId = fileName(old); });
    g_files.erase(handleBits(old));
    return rc;
}
HPCPROF_PMPI_ALIAS(MPI_File_close)

HPCPROF_MPI_EXPORT int MPI_File_sync(MPI_File fh) {
    auto fn = g_fileSync.get();
    if (!fn) return kNoMpi;
    return tracedCall(Op::MpiFileSync, [&] { return fn(fh); },
                      [&](MpiEvent& e, int) { e.objectId = fileName(fh); });
}
HPCPROF_PMPI_ALIAS(MPI_File_sync)

HPCPROF_MPI_EXPORT int MPI_File_read(MPI_File fh, void* buf, int count, MPI_Datatype type,
                                     MPI_Status* status) {
    auto fn = g_fileRead.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileRead, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_read)

HPCPROF_MPI_EXPORT int MPI_File_read_all(MPI_File fh, void* buf, int count, MPI_Datatype type,
                                         MPI_Status* status) {
    auto fn = g_fileReadAll.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileReadAll, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_read_all)

HPCPROF_MPI_EXPORT int MPI_File_write(MPI_File fh, const void* buf, int count, MPI_Datatype type,
                                      MPI_Status* status) {
    auto fn = g_fileWrite.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileWrite, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_write)

HPCPROF_MPI_EXPORT int MPI_File_write_all(MPI_File fh, const void* buf, int count,
                                          MPI_Datatype type, MPI_Status* status) {
    auto fn = g_fileWriteAll.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileWriteAll, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_write_all)

HPCPROF_MPI_EXPORT int MPI_File_read_at(MPI_File fh, MPI_Offset off, void* buf, int count,
                                        MPI_Datatype type, MPI_Status* status) {
    auto fn = g_fileReadAt.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileReadAt, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, off, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_read_at)

HPCPROF_MPI_EXPORT int MPI_File_read_at_all(MPI_File fh, MPI_Offset off, void* buf, int count,
                                            MPI_Datatype type, MPI_Status* status) {
    auto fn = g_fileReadAtAll.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileReadAtAll, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, off, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_read_at_all)

HPCPROF_MPI_EXPORT int MPI_File_write_at(MPI_File fh, MPI_Offset off, const void* buf, int count,
                                         MPI_Datatype type, MPI_Status* status) {
    auto fn = g_fileWriteAt.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileWriteAt, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, off, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_write_at)

HPCPROF_MPI_EXPORT int MPI_File_write_at_all(MPI_File fh, MPI_Offset off, const void* buf,
                                             int count, MPI_Datatype type, MPI_Status* status) {
    auto fn = g_fileWriteAtAll.get();
    if (!fn) return kNoMpi;
    return fileTransfer(Op::MpiFileWriteAtAll, fh, count, type, status,
                        [&](MPI_Status* st) { return fn(fh, off, buf, count, type, st); });
}
HPCPROF_PMPI_ALIAS(MPI_File_write_at_all)

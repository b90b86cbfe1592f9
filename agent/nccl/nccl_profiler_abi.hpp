// SPDX-License-Identifier: MIT
// The NCCL profiler-plugin ABI, versions 5 (NCCL 2.28) and 4 (NCCL 2.27), declared from NCCL's
// documented layout (ext-profiler/README.md, src/include/plugin/profiler/profiler_v{4,5}.h).
// NCCL does not install these headers, so the plugin carries its own copy of the layout; the
// static_asserts pin the sizes NCCL 2.28.9 uses on x86-64.
#pragma once

#include <nccl.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace hpcprof::agent::nccl::abi {

enum EventType : uint64_t {
    kGroup = 1 << 0,
    kColl = 1 << 1,
    kP2p = 1 << 2,
    kProxyOp = 1 << 3,
    kProxyStep = 1 << 4,
    kProxyCtrl = 1 << 5,
    kKernelCh = 1 << 6,
    kNetPlugin = 1 << 7,
    kGroupApi = 1 << 8,
    kCollApi = 1 << 9,
    kP2pApi = 1 << 10,
    kKernelLaunch = 1 << 11,
};

using EventState = int; // ncclProfilerEventState_t (an enum; values 0..30)
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* fmt, ...);

struct CollV4 {
    uint64_t seqNumber;
    const char* func;
    void const* sendBuff;
    void* recvBuff;
    size_t count;
    int root;
    const char* datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char* algo;
    const char* proto;
};
struct P2pV4 {
    const char* func;
    void* buff;
    const char* datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
};
struct ProxyOp {
    pid_t pid;
    uint8_t channelId;
    int peer;
    int nSteps;
    int chunkSize;
    int isSend;
};
struct KernelCh {
    uint8_t channelId;
    uint64_t pTimer;
};

struct DescrV4 {
    uint8_t type;
    void* parentObj;
    int rank;
    union {
        CollV4 coll;
        P2pV4 p2p;
        ProxyOp proxyOp;
        struct {
            int step;
        } proxyStep;
        KernelCh kernelCh;
        struct {
            int64_t id;
            void* data;
        } netPlugin;
    };
};

struct DescrV5 {
    uint64_t type;
    void* parentObj;
    int rank;
    union {
        struct {
            bool graphCaptured;
            int groupDepth;
        } groupApi;
        struct {
            const char* func;
            size_t count;
            const char* datatype;
            int root;
            void* stream;
            bool graphCaptured;
        } collApi;
        struct {
            const char* func;
            size_t count;
            const char* datatype;
            void* stream;
            bool graphCaptured;
        } p2pApi;
        struct {
            void* stream;
        } kernelLaunch;
        struct {
            uint64_t seqNumber;
            const char* func;
            void const* sendBuff;
            void* recvBuff;
            size_t count;
            int root;
            const char* datatype;
            uint8_t nChannels;
            uint8_t nWarps;
            const char* algo;
            const char* proto;
            void* parentGroup;
        } coll;
        struct {
            const char* func;
            void* buff;
            const char* datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
            void* parentGroup;
        } p2p;
        ProxyOp proxyOp;
        struct {
            int step;
        } proxyStep;
        KernelCh kernelCh;
        struct {
            int64_t id;
            void* data;
        } netPlugin;
    };
};

union StateArgs {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void* data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh;
};

struct ProfilerV5 {
    const char* name;
    ncclResult_t (*init)(void** context, uint64_t commId, int* eActivationMask,
                         const char* commName, int nNodes, int nranks, int rank,
                         DebugLogger logfn);
    ncclResult_t (*startEvent)(void* context, void** eHandle, DescrV5* eDescr);
    ncclResult_t (*stopEvent)(void* eHandle);
    ncclResult_t (*recordEventState)(void* eHandle, EventState eState, StateArgs* eStateArgs);
    ncclResult_t (*finalize)(void* context);
};

struct ProfilerV4 {
    const char* name;
    ncclResult_t (*init)(void** context, int* eActivationMask, const char* commName,
                         uint64_t commHash, int nNodes, int nranks, int rank, DebugLogger logfn);
    ncclResult_t (*startEvent)(void* context, void** eHandle, DescrV4* eDescr);
    ncclResult_t (*stopEvent)(void* eHandle);
    ncclResult_t (*recordEventState)(void* eHandle, EventState eState, StateArgs* eStateArgs);
    ncclResult_t (*finalize)(void* context);
};


static_assert(sizeof(DescrV5) == 112 && offsetof(DescrV5, coll) == 24);
static_assert(sizeof(DescrV4) == 104 && offsetof(DescrV4, coll) == 24);
static_assert(sizeof(StateArgs) == 8);

} // namespace hpcprof::agent::nccl::abi

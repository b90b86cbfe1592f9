// SPDX-License-Identifier: MIT
// TEST-ONLY harness that plays NCCL's part towards a profiler plugin: dlopen the library named on
// the command line, look up ncclProfiler_v5 (as NCCL 2.28 does first) and ncclProfiler_v4 (its
// fallback, NCCL 2.27's version), and drive init/startEvent/recordEventState/stopEvent/finalize
// with synthetic descriptors: an API group with a collective and its kernel launch, an enqueued
// collective, a p2p, a proxy op, a kernel channel, 4100 collectives held open at once (more than
// the plugin's pool), then the v4 table. Prints what it saw; exit 0 when the plugin behaved.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

#include "agent/nccl/nccl_profiler_abi.hpp"

namespace abi = hpcprof::agent::nccl::abi;

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) return 3;
    auto* v5 = static_cast<abi::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
    auto* v4 = static_cast<abi::ProfilerV4*>(dlsym(lib, "ncclProfiler_v4"));
    if (!v5 || !v4) return 4;
    int failures = 0;

    void* ctx = nullptr;
    int mask = 0;
    if (v5->init(&ctx, 0x1234, &mask, "world", 1, 2, 0, nullptr) != ncclSuccess) return 5;
    std::printf("name=%s mask_v5=%d\n", v5->name, mask);

    auto start = [&](abi::DescrV5 d) {
        void* h = nullptr;
        if (v5->startEvent(ctx, &h, &d) != ncclSuccess) ++failures;
        return h;
    };
    abi::DescrV5 group{};
    group.type = abi::kGroupApi;
    group.groupApi.groupDepth = 1;
    void* hGroup = start(group);
    abi::DescrV5 coll{};
    coll.type = abi::kCollApi;
    coll.parentObj = hGroup;
    coll.collApi = {"AllReduce", 1024, "ncclFloat32", -1, reinterpret_cast<void*>(0x10), false};
    void* hCollApi = start(coll);
    abi::DescrV5 launch{};
    launch.type = abi::kKernelLaunch;
    launch.kernelLaunch.stream = reinterpret_cast<void*>(0x10);
    v5->stopEvent(start(launch));
    v5->stopEvent(hCollApi);
    v5->stopEvent(hGroup);

    abi::DescrV5 c{};
    c.type = abi::kColl;
    c.coll.seqNumber = 7;
    c.coll.func = "AllReduce";
    c.coll.count = 1024;
    c.coll.root = -1;
    c.coll.datatype = "ncclFloat32";
    c.coll.algo = "RING";
    c.coll.proto = "LL";
    v5->stopEvent(start(c));

    abi::DescrV5 p{};
    p.type = abi::kP2p;
    p.p2p.func = "Send";
    p.p2p.count = 16;
    p.p2p.datatype = "ncclInt64";
    p.p2p.peer = 1;
    v5->stopEvent(start(p));

    abi::DescrV5 proxy{};
    proxy.type = abi::kProxyOp;
    proxy.proxyOp = {getpid(), 3, 1, 4, 512, 1};
    v5->stopEvent(start(proxy));

    abi::DescrV5 ch{};
    ch.type = abi::kKernelCh;
    ch.kernelCh = {2, 999};
    void* hCh = start(ch);
    abi::StateArgs stop{};
    stop.kernelCh.pTimer = 1999;
    if (v5->recordEventState(hCh, 22 /* KernelChStop */, &stop) != ncclSuccess) ++failures;
    v5->stopEvent(hCh);

    // More events open at once than the plugin's pool holds: the excess get null handles.
    std::vector<void*> open;
    int nulls = 0;
    for (int i = 0; i < 4100; ++i) {
        c.coll.seqNumber = uint64_t(100 + i);
        void* h = start(c);
        if (h)
            open.push_back(h);
        else
            ++nulls;
    }
    for (void* h : open) v5->stopEvent(h);
    v5->stopEvent(nullptr); // NCCL may stop an event it got a null handle for
    std::printf("null_handles=%d\n", nulls);
    if (v5->finalize(ctx) != ncclSuccess) ++failures;

    void* ctx4 = nullptr;
    int mask4 = 0;
    if (v4->init(&ctx4, &mask4, "world4", 0xabcd, 1, 2, 1, nullptr) != ncclSuccess) return 6;
    std::printf("mask_v4=%d\n", mask4);
    abi::DescrV4 c4{};
    c4.type = abi::kColl;
    c4.coll.seqNumber = 3;
    c4.coll.func = "Broadcast";
    c4.coll.count = 64;
    c4.coll.root = 0;
    c4.coll.datatype = "ncclInt32";
    void* h4 = nullptr;
    if (v4->startEvent(ctx4, &h4, &c4) != ncclSuccess || !h4) ++failures;
    v4->stopEvent(h4);
    if (v4->finalize(ctx4) != ncclSuccess) ++failures;
    std::printf("failures=%d\n", failures);
    return failures == 0 ? 0 : 1;
}

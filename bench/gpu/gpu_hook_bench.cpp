// SPDX-License-Identifier: MIT
// CPU-side cost of the NVTX and NCCL hooks per call: `gpu_hook_bench nvtx N` times N
// nvtxRangePushA/nvtxRangePop pairs, `gpu_hook_bench nccl N` times N ncclAllReduce calls of one
// int32 on a 1-rank communicator of the test-only stand-in libnccl (so the NCCL side costs
// little and the hook's share is visible). Prints ns per call (pair) on stdout. Run it with and
// without the agent (bench/gpu/hook_cost.sh) to get the added cost.
#include <nccl.h>
#include <nvtx3/nvToolsExt.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: gpu_hook_bench nvtx|nccl [N]\n");
        return 2;
    }
    long n = argc > 2 ? std::atol(argv[2]) : 1000000;
    auto t0 = std::chrono::steady_clock::now();
    if (std::strcmp(argv[1], "nvtx") == 0) {
        nvtxRangePushA("warm-up"); // the first call initialises NVTX (and loads the injection)
        nvtxRangePop();
        t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; ++i) {
            nvtxRangePushA("bench-range");
            nvtxRangePop();
        }
    } else {
        ncclUniqueId id;
        ncclComm_t comm;
        if (ncclGetUniqueId(&id) != ncclSuccess || ncclCommInitRank(&comm, 1, id, 0) != ncclSuccess)
            return 3;
        int32_t in = 1, out = 0;
        t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < n; ++i) ncclAllReduce(&in, &out, 1, ncclInt32, ncclSum, comm, nullptr);
        auto t1 = std::chrono::steady_clock::now();
        ncclCommDestroy(comm);
        std::printf("%.2f\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / double(n));
        return 0;
    }
    auto t1 = std::chrono::steady_clock::now();
    std::printf("%.2f\n", std::chrono::duration<double, std::nano>(t1 - t0).count() / double(n));
    return 0;
}

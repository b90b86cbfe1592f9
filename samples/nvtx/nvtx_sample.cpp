// SPDX-License-Identifier: MIT
// NVTX sample with a known, exact set of ranges (see tests/integration/gpu_nvtx_test.cpp):
//   main thread:   outer { begin(mark) lib_compute{lib_registered} x2 inner wide_ü }
//                  async (started here, ended by the worker)  never_closed (no pop)
//   worker thread: worker { worker_inner } x3, then ends "async"
// plus one pop without a push. Exits with argv[1] (default 0).
#include <nvToolsExt.h>

#include <cstdlib>
#include <thread>

#include "nvtx_user.hpp"

int main(int argc, char** argv) {
    int exitCode = argc > 1 ? std::atoi(argv[1]) : 0;
    nvtxNameCategoryA(3, "io_phase");

    nvtxRangePushA("outer");
    nvtxMarkA("begin");
    nvtx_user_work(2);
    nvtxEventAttributes_t a = {};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.category = 3;
    a.colorType = NVTX_COLOR_ARGB;
    a.color = 0xff00ff00;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = "inner";
    nvtxRangePushEx(&a);
    nvtxRangePop();
    nvtxRangePushW(L"wide_\u00fc");
    nvtxRangePop();
    nvtxRangePop();

    nvtxRangeId_t async = nvtxRangeStartA("async");
    std::thread worker([async] {
        for (int i = 0; i < 3; ++i) {
            nvtxRangePushA("worker");
            nvtxRangePushA("worker_inner");
            nvtxRangePop();
            nvtxRangePop();
        }
        nvtxRangeEnd(async);
    });
    worker.join();

    nvtxRangePop(); // unbalanced: nothing is open
    nvtxRangePushA("never_closed");
    return exitCode;
}

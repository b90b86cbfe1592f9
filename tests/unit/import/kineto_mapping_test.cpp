// SPDX-License-Identifier: MIT
// Unit tests of the pure Kineto -> hpcprof mapping rules: exact time conversion, categories,
// NCCL kernel names, memcpy kinds, ranks from file names.
#include <catch2/catch.hpp>

#include "import/kineto_mapping.hpp"

using namespace hpcprof;
using namespace hpcprof::import;
using schema::Category;

TEST_CASE("decimal microseconds convert to nanoseconds exactly", "[import][time]") {
    CHECK(decimalToNs("1682725898236567", 1000) == 1682725898236567000);
    CHECK(decimalToNs("68.0", 1000) == 68000);
    CHECK(decimalToNs("0.001", 1000) == 1);
    CHECK(decimalToNs("1682725898236567.123", 1000) == 1682725898236567123);
    // 0.1 has no exact binary form; text parsing must not lose the last ns.
    CHECK(decimalToNs("1000000000000.1", 1000) == 1000000000000100);
    CHECK(decimalToNs("2.0005", 1000) == 2001);   // half rounds away from zero
    CHECK(decimalToNs("2.0004999", 1000) == 2000);
    CHECK(decimalToNs("-3.5", 1000) == -3500);
    CHECK(decimalToNs("1.5e3", 1000) == 1500000);
    CHECK(decimalToNs("15E-1", 1000) == 1500);
    CHECK(decimalToNs("0.0000004", 1000) == 0);
    CHECK(decimalToNs("123.7", 1) == 124); // a file in ns: sub-ns digits round
    CHECK_FALSE(decimalToNs("", 1000));
    CHECK_FALSE(decimalToNs("abc", 1000));
    CHECK_FALSE(decimalToNs("1.2.3", 1000));
    CHECK_FALSE(decimalToNs("1e", 1000));
    CHECK_FALSE(decimalToNs("1e400", 1000)); // overflow is an error, not a wrap
}

TEST_CASE("Kineto categories map onto hpcprof categories and lanes", "[import][mapping]") {
    auto m = mapCategory("kernel", "void at::native::vectorized_elementwise_kernel<4>", false);
    CHECK(m.category == Category::GpuKernel);
    CHECK(m.lane == Lane::Gpu);
    CHECK(mapCategory("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", false)
              .category == Category::GpuCommKernel);
    CHECK(mapCategory("kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL(x)", false).category ==
          Category::GpuCommKernel);
    // Newer traces mark collectives in args; the kernel name then need not say nccl.
    CHECK(mapCategory("kernel", "some_fused_comm_kernel", true).category ==
          Category::GpuCommKernel);
    CHECK(mapCategory("gpu_memcpy", "Memcpy HtoD", false).category == Category::GpuMemcpy);
    CHECK(mapCategory("Memset", "Memset (Device)", false).category == Category::GpuMemset);
    CHECK(mapCategory("cuda_runtime", "cudaLaunchKernel", false).category == Category::CudaApi);
    CHECK(mapCategory("cuda_runtime", "cudaLaunchKernel", false).lane == Lane::Cpu);
    CHECK(mapCategory("cuda_driver", "cuLaunchKernel", false).category == Category::CudaApi);
    CHECK(mapCategory("cpu_op", "aten::mm", false).category == Category::CpuOp);
    CHECK(mapCategory("python_function", "train.py(12): step", false).category ==
          Category::CpuOp);
    CHECK(mapCategory("user_annotation", "ProfilerStep#3", false).category ==
          Category::UserRange);
    CHECK(mapCategory("gpu_user_annotation", "ProfilerStep#3", false).lane == Lane::Gpu);
    CHECK(mapCategory("cuda_sync", "Stream Sync", false).category == Category::GpuSync);
    CHECK(mapCategory("nvtx", "my range", false).category == Category::Nvtx);
    auto unknown = mapCategory("something_new", "x", false);
    CHECK(unknown.category == Category::CpuOp);
    CHECK_FALSE(unknown.known);
}

TEST_CASE("every Kineto category spelling maps, in any case", "[import][mapping]") {
    struct Case {
        const char* cat;
        Category category;
        Lane lane;
    };
    const Case cases[] = {
        {"gpu_memcpy", Category::GpuMemcpy, Lane::Gpu},
        {"Memcpy", Category::GpuMemcpy, Lane::Gpu},
        {"GPU_MEMSET", Category::GpuMemset, Lane::Gpu},
        {"memset", Category::GpuMemset, Lane::Gpu},
        {"gpu_user_annotation", Category::UserRange, Lane::Gpu},
        {"Cuda_Sync", Category::GpuSync, Lane::Gpu},
        {"cuda_runtime", Category::CudaApi, Lane::Cpu},
        {"Runtime", Category::CudaApi, Lane::Cpu},
        {"cuda_driver", Category::CudaApi, Lane::Cpu},
        {"CPU_OP", Category::CpuOp, Lane::Cpu},
        {"Operator", Category::CpuOp, Lane::Cpu},
        {"python_function", Category::CpuOp, Lane::Cpu},
        {"Python", Category::CpuOp, Lane::Cpu},
        {"cpu_instant_event", Category::CpuOp, Lane::Cpu},
        {"user_annotation", Category::UserRange, Lane::Cpu},
        {"Trace", Category::UserRange, Lane::Cpu},
        {"cuda_profiler_range", Category::UserRange, Lane::Cpu},
        {"", Category::CpuOp, Lane::Cpu}, // plain Chrome traces
        {"KERNEL", Category::GpuKernel, Lane::Gpu},
    };
    for (const Case& c : cases) {
        INFO("cat '" << c.cat << "'");
        auto m = mapCategory(c.cat, "gemm", false);
        CHECK(m.category == c.category);
        CHECK(m.lane == c.lane);
        CHECK(m.known);
    }
    // hpcprof's own names (exports): GPU kernels, copies and sets go on a stream.
    for (const auto& info : hpcprof::schema::kCategories) {
        INFO("hpcprof category " << info.name);
        auto m = mapCategory(info.name, "", false);
        CHECK(m.known);
        bool stream = info.category == Category::GpuKernel ||
                      info.category == Category::GpuCommKernel ||
                      info.category == Category::GpuMemcpy ||
                      info.category == Category::GpuMemset;
        CHECK((m.lane == Lane::Gpu) == stream);
    }
}

TEST_CASE("other accelerators' Kineto categories: device events, runtime calls, not analysed",
          "[import][kineto][accelerator]") {
    // MTIA's on-device events are kernels on a device track (Kineto aliases MTIA_CCP_EVENTS to
    // CONCURRENT_KERNEL); NCCL-like names and collective args make them communication.
    auto mtia = mapCategory("mtia_ccp_events", "mm_kernel", false);
    CHECK(mtia.category == Category::GpuKernel);
    CHECK(mtia.lane == Lane::Gpu);
    CHECK(mtia.accelerator == "MTIA");
    CHECK(mapCategory("mtia_ccp_events", "x", true).category == Category::GpuCommKernel);
    // Runtime and driver calls of any accelerator are runtime API calls on the host.
    for (const char* cat : {"mtia_runtime", "xpu_runtime", "xpu_driver", "privateuse1_runtime",
                            "privateuse1_driver", "glow_runtime", "driver", "hpu_op",
                            "gcu_runtime"}) {
        INFO(cat);
        auto m = mapCategory(cat, "launch", false);
        CHECK(m.category == Category::CudaApi);
        CHECK(m.lane == Lane::Cpu);
        CHECK(m.known);
        CHECK_FALSE(m.notAnalysed);
    }
    CHECK(mapCategory("xpu_sync", "sync", false).category == Category::GpuSync);
    // Kineto categories that are not timed work of the program: not imported.
    for (const char* cat : {"overhead", "cuda_event", "mtia_insight", "mtia_counters",
                            "gpu_pm_counter", "xpu_scope_profiler", "collective_comm"}) {
        INFO(cat);
        auto m = mapCategory(cat, "e", false);
        CHECK(m.known);
        CHECK(m.notAnalysed);
    }
    // A category nobody defined stays an unknown CPU annotation; CUDA's kernels name no
    // accelerator (their tracks are "GPU d stream s").
    auto unknown = mapCategory("my_phase", "e", false);
    CHECK_FALSE(unknown.known);
    CHECK_FALSE(unknown.notAnalysed);
    CHECK(mapCategory("kernel", "gemm", false).accelerator.empty());
}

TEST_CASE("NCCL kernel names are recognised across NCCL renames", "[import][nccl]") {
    CHECK(isNcclKernelName("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"));
    CHECK(isNcclKernelName("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"));
    CHECK(isNcclKernelName("void ncclKernel_AllReduce_RING_LL_Sum_half(ncclWorkElem)"));
    CHECK_FALSE(isNcclKernelName("void at::native::nccl_like_but_not<float>()"));
    CHECK(ncclCollectiveFromName("ncclKernel_AllReduce_RING_LL_Sum_float") == "AllReduce");
    CHECK(ncclCollectiveFromName("ncclDevKernel_AllReduce_Sum_f32_RING_LL") == "AllReduce");
    CHECK(ncclCollectiveFromName("ncclDevKernel_ReduceScatter(args)") == "ReduceScatter");
    CHECK(isPointToPoint("SendRecv"));
    CHECK(isPointToPoint("_send"));
    CHECK_FALSE(isPointToPoint("AllReduce"));
    CHECK(dtypeSize("Float") == 4);
    CHECK(dtypeSize("BFloat16") == 2);
    CHECK(dtypeSize("Long") == 8);
    CHECK(dtypeSize("mystery") == 0);
}

TEST_CASE("memcpy names give the copy direction and memory kinds", "[import][mapping]") {
    auto k = parseMemcpyName("Memcpy DtoH (Device -> Pageable)");
    CHECK(k.copyKind == "DtoH");
    CHECK(k.srcKind == "device");
    CHECK(k.dstKind == "pageable");
    auto h = parseMemcpyName("Memcpy HtoD (Pinned -> Device)");
    CHECK(h.copyKind == "HtoD");
    CHECK(h.srcKind == "pinned");
    CHECK(parseMemcpyName("Memset (Device)").copyKind.empty());
}

TEST_CASE("ranks are read from file names only where the name says rank", "[import][rank]") {
    CHECK(rankFromFileName("sampled_rank-1.json.gz") == 1);
    CHECK(rankFromFileName("trace_rank_12.json") == 12);
    CHECK(rankFromFileName("Rank7.pt.trace.json") == 7);
    CHECK_FALSE(rankFromFileName("host_4037.1682725898.pt.trace.json"));
    CHECK_FALSE(rankFromFileName("ranking.json"));
}

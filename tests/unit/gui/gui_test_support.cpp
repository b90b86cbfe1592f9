// SPDX-License-Identifier: MIT
#include "gui_test_support.hpp"

#include <QApplication>

#include "hpcprof/schema/catalog.hpp"
#include "tests/unit/analyzer/trace_builder.hpp"

namespace hpcprof::test {

void ensureGuiApp() {
    if (QCoreApplication::instance()) return;
    qputenv("QT_QPA_PLATFORM", "offscreen");
    static int argc = 1;
    static char name[] = "hpcprof_gui_tests";
    static char* argv[] = {name, nullptr};
    new QApplication(argc, argv); // lives until the process exits
}

void writeClassesTrace(const std::string& path) {
    using schema::Category;
    TraceBuilder b;
    const int r0 = b.rank(0, 0, 1'000'000, 2);
    const int gpu = b.gpuStream(r0, 0, 7);
    const int r1 = b.rank(1, 0, 1'000'000, 2);
    b.event(r0, Category::Nvtx, "train_step", 0, 900'000);
    b.event(r0, Category::ComputeRange, "forward", 100'000, 100'000).withDepth(1);
    b.event(r0, Category::MpiCollective, "MPI_Allreduce", 300'000, 100'000).withDepth(1).withBytes(8 << 20).collective("world", 2, 0);
    b.event(r0, Category::CudaApi, "cudaLaunchKernel", 402'000, 4'000).withDepth(1).correlationId = 7;
    b.event(r0, Category::PosixIo, "read", 500'000, 100'000).withDepth(1).withBytes(4096).withObject("/data/in.bin");
    b.event(r0, Category::GpuSync, "cudaDeviceSynchronize", 700'000, 100'000).withDepth(1);
    b.event(gpu, Category::GpuMemcpy, "Memcpy HtoD", 220'000, 60'000).withBytes(1 << 20).withArg("copy_kind", "HtoD");
    b.event(gpu, Category::GpuKernel, "gemm_kernel", 410'000, 40'000).correlationId = 7;
    b.event(r1, Category::MpiCollective, "MPI_Allreduce", 350'000, 50'000).withBytes(8 << 20).collective("world", 2, 0);
    for (int i = 0; i < 200; ++i) b.event(r1, Category::PosixIo, "write", 600'000 + i * 1'000, 100).withBytes(64);
    b.write(path);
}

} // namespace hpcprof::test

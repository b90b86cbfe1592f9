// SPDX-License-Identifier: MIT
// A data-parallel training step in miniature, for hpcprof's GPU capture: per step (NVTX range
// "step N"), host-to-device copies of a batch, GEMM-like kernels on two streams, a memset of the
// gradient buffer, an NCCL all-reduce of the gradients on a 1-rank communicator, a stream sync, a
// device-to-host copy; then a CUDA graph of the forward kernels replayed 3 times and a device
// sync. Without a usable GPU it says why and exits with 3 after its NVTX "setup" range.
//
//   training_step [steps]        (default 3) training-like steps; prints elapsed_ms of the loop
//   training_step launch [n]     n empty kernel launches (default 100000); prints elapsed_ms
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#if HPCPROF_SAMPLE_NCCL
#include <nccl.h>
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr int kN = 512; // matrices are kN x kN floats

__global__ void gemm(const float* a, const float* b, float* c, int n) {
    __shared__ float ta[16][16];
    __shared__ float tb[16][16];
    int row = blockIdx.y * 16 + threadIdx.y, col = blockIdx.x * 16 + threadIdx.x;
    float acc = 0.f;
    for (int t = 0; t < n; t += 16) {
        ta[threadIdx.y][threadIdx.x] = a[row * n + t + threadIdx.x];
        tb[threadIdx.y][threadIdx.x] = b[(t + threadIdx.y) * n + col];
        __syncthreads();
        for (int k = 0; k < 16; ++k) acc += ta[threadIdx.y][k] * tb[k][threadIdx.x];
        __syncthreads();
    }
    c[row * n + col] = acc;
}

__global__ void empty() {}

__global__ void sgdUpdate(float* w, const float* g, float lr, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) w[i] -= lr * g[i];
}

#define CHECK_CUDA(expr)                                                                           \
    do {                                                                                           \
        cudaError_t e_ = (expr);                                                                   \
        if (e_ != cudaSuccess) {                                                                   \
            std::fprintf(stderr, "training_step: %s: %s\n", #expr, cudaGetErrorString(e_));       \
            return 4;                                                                              \
        }                                                                                          \
    } while (0)

} // namespace

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int launchLoop(int n) {
    empty<<<1, 1>>>(); // initialise the context outside the timed loop
    CHECK_CUDA(cudaDeviceSynchronize());
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i) empty<<<1, 1>>>();
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("elapsed_ms=%.3f launches=%d\n", msSince(t0), n);
    return 0;
}

int main(int argc, char** argv) {
    bool launch = argc > 1 && std::strcmp(argv[1], "launch") == 0;
    int steps = argc > 1 && !launch ? std::atoi(argv[1]) : 3;
    nvtxRangePushA("setup");
    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        nvtxMarkA("no_device");
        nvtxRangePop();
        std::fprintf(stderr, "training_step: no CUDA device: %s\n",
                     err != cudaSuccess ? cudaGetErrorString(err) : "none visible");
        return 3;
    }
    if (launch) {
        nvtxRangePop();
        return launchLoop(argc > 2 ? std::atoi(argv[2]) : 100000);
    }
    const size_t elems = size_t(kN) * kN, bytes = elems * sizeof(float);
    float *hostBatch = nullptr, *hostOut = nullptr;
    CHECK_CUDA(cudaMallocHost(&hostBatch, bytes));
    CHECK_CUDA(cudaMallocHost(&hostOut, bytes));
    for (size_t i = 0; i < elems; ++i) hostBatch[i] = float(i % 7) * 0.01f;
    float *a, *w, *act, *grad, *act2, *gradSum;
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMalloc(&w, bytes));
    CHECK_CUDA(cudaMalloc(&act, bytes));
    CHECK_CUDA(cudaMalloc(&act2, bytes));
    CHECK_CUDA(cudaMalloc(&grad, bytes));
    CHECK_CUDA(cudaMalloc(&gradSum, bytes));
    CHECK_CUDA(cudaMemset(w, 0, bytes));
    cudaStream_t compute, side;
    CHECK_CUDA(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CHECK_CUDA(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
#if HPCPROF_SAMPLE_NCCL
    ncclComm_t comm;
    int dev0 = 0;
    if (ncclCommInitAll(&comm, 1, &dev0) != ncclSuccess) {
        std::fprintf(stderr, "training_step: ncclCommInitAll failed\n");
        return 5;
    }
#endif
    nvtxRangePop();

    dim3 block(16, 16), grid(kN / 16, kN / 16);
    auto t0 = std::chrono::steady_clock::now();
    for (int s = 0; s < steps; ++s) {
        char name[32];
        std::snprintf(name, sizeof(name), "step %d", s);
        nvtxRangePushA(name);
        CHECK_CUDA(cudaMemcpyAsync(a, hostBatch, bytes, cudaMemcpyHostToDevice, compute));
        gemm<<<grid, block, 0, compute>>>(a, w, act, kN);        // forward
        gemm<<<grid, block, 0, side>>>(a, a, act2, kN);           // an independent branch
        CHECK_CUDA(cudaMemsetAsync(grad, 0, bytes, compute));
        gemm<<<grid, block, 0, compute>>>(act, a, grad, kN);      // backward
#if HPCPROF_SAMPLE_NCCL
        nvtxRangePushA("allreduce");
        // Out of place: a 1-rank in-place all-reduce may do no GPU work at all.
        if (ncclAllReduce(grad, gradSum, elems, ncclFloat32, ncclSum, comm, compute) != ncclSuccess)
            return 5;
        nvtxRangePop();
#endif
#if HPCPROF_SAMPLE_NCCL
        sgdUpdate<<<int((elems + 255) / 256), 256, 0, compute>>>(w, gradSum, 1e-3f, int(elems));
#else
        sgdUpdate<<<int((elems + 255) / 256), 256, 0, compute>>>(w, grad, 1e-3f, int(elems));
#endif
        CHECK_CUDA(cudaStreamSynchronize(side));
        CHECK_CUDA(cudaStreamSynchronize(compute));
        CHECK_CUDA(cudaMemcpy(hostOut, w, bytes, cudaMemcpyDeviceToHost));
        nvtxRangePop();
    }
    double loopMs = msSince(t0);

    // Forward pass captured once as a graph, replayed three times.
    nvtxRangePushA("graph");
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CHECK_CUDA(cudaStreamBeginCapture(compute, cudaStreamCaptureModeGlobal));
    gemm<<<grid, block, 0, compute>>>(a, w, act, kN);
    gemm<<<grid, block, 0, compute>>>(act, w, act2, kN);
    CHECK_CUDA(cudaStreamEndCapture(compute, &graph));
    CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
    for (int r = 0; r < 3; ++r) CHECK_CUDA(cudaGraphLaunch(exec, compute));
    CHECK_CUDA(cudaDeviceSynchronize());
    nvtxRangePop();

    std::printf("elapsed_ms=%.3f steps=%d w0=%g\n", loopMs, steps, double(hostOut[0]));
    CHECK_CUDA(cudaGraphExecDestroy(exec));
    CHECK_CUDA(cudaGraphDestroy(graph));
#if HPCPROF_SAMPLE_NCCL
    ncclCommDestroy(comm);
#endif
    cudaFree(a), cudaFree(w), cudaFree(act), cudaFree(act2), cudaFree(grad), cudaFree(gradSum);
    cudaFreeHost(hostBatch), cudaFreeHost(hostOut);
    return 0;
}

// SPDX-License-Identifier: MIT
// What a GPU kernel's name says about the matrix multiplication (GEMM) it runs: one rule for the
// whole product (the fp32-gemm advice rule reads it through name_flags.hpp).
//
// Only the kernel families of the GEMM libraries are recognised, by the routine's own name, never
// by a word anywhere in the name: cuBLAS (`ampere_sgemm_128x64_nn`, `volta_h884gemm_...`,
// `sm80_xmma_gemm_f32f32_tf32f32_f32_...`, Hopper's `nvjet_...`, cublasLt's `gemmSN_TN_kernel<float,
// ...>`, `gemv2T_kernel_val<...>`, `gemmk1_kernel<...>`), CUTLASS (`cutlass_80_tensorop_s1688gemm_...`,
// `cutlass_80_simt_sgemm_...`, inside `cutlass::Kernel<...>`) and MAGMA (`magmablas_sgemm_...`).
// FBGEMM's embedding and quantisation kernels (`fbgemm_gpu::...`, `split_embedding_...<c10::Half,
// float, ...>`) and elementwise kernels whose template arguments say `float` are not GEMMs.
#pragma once

#include <cstdint>
#include <string_view>

namespace hpcprof::analyzer {

enum class GemmKind : uint8_t {
    None,       ///< not a kernel of a known GEMM family (Triton's `triton_mm_*` cannot be told)
    Fp32Simt,   ///< an FP32 GEMM on the CUDA cores: `sgemm`, CUTLASS `simt_sgemm`, xmma with
                ///< FP32 math (`f32f32_f32f32`, `ffma`), cublasLt GEMM kernels of `float`
    TensorCore, ///< runs on tensor cores: `tensorop`, `wmma`, xmma/nvjet, MMA shapes
                ///< (`h884`, `s1688` = TF32 from FP32 data, `s16816`, `i8816`), tf32/f16/bf16/fp8
    Other,      ///< a GEMM that mixed precision would not speed up as the rule says: FP64 or
                ///< complex, half precision on CUDA cores, matrix-vector and k=1 products (memory
                ///< bound: `gemv*`, `gemmk1`), or a type the name does not give
};

/// The GEMM kind of a (demangled) kernel name.
GemmKind gemmKindOf(std::string_view kernelName);

} // namespace hpcprof::analyzer

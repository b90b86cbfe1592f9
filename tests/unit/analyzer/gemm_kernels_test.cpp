// SPDX-License-Identifier: MIT
// The GEMM kind of kernel names (analyzer/src/gemm_kernels.hpp), on names as the profilers write
// them: cuBLAS, cublasLt, CUTLASS and MAGMA GEMMs, and kernels that only look like GEMMs (FBGEMM's
// embedding kernels, elementwise kernels of float). Names marked "real" are from the Kineto traces
// in tests/data/kineto.
#include <catch2/catch.hpp>

#include "analyzer/src/gemm_kernels.hpp"
#include "analyzer/src/name_flags.hpp"

using namespace hpcprof::analyzer;

namespace {

struct Case {
    const char* name;
    GemmKind kind;
};

void checkAll(std::initializer_list<Case> cases) {
    for (const auto& c : cases) {
        INFO(c.name);
        CHECK(gemmKindOf(c.name) == c.kind);
        // The name flag the fp32-gemm rule reads is the same rule.
        CHECK(bool(classifyName(c.name) & kFp32Gemm) == (c.kind == GemmKind::Fp32Simt));
    }
}

} // namespace

TEST_CASE("FP32 GEMMs on the CUDA cores are recognised by their library's naming",
          "[analyzer][gemm]") {
    checkAll({
        {"ampere_sgemm_32x128_tn", GemmKind::Fp32Simt}, // real
        {"ampere_sgemm_128x64_nn", GemmKind::Fp32Simt}, // real
        {"volta_sgemm_128x64_nn", GemmKind::Fp32Simt},
        {"maxwell_sgemm_128x64_nt", GemmKind::Fp32Simt},
        {"void sgemm_largek_lds64<true, true, 6, 3, 4, 5, 2, 66>(float*, float const*, float "
         "const*, int, int, int, int, int, int, float const*, float const*, float, float, int, "
         "int, int*, int*)",
         GemmKind::Fp32Simt}, // real
        {"sgemm_sm35_ldg_nn_64x16x64x16x16", GemmKind::Fp32Simt},
        {"void cutlass::Kernel<cutlass_80_simt_sgemm_128x128_8x4_nn_align1>(cutlass_80_simt_"
         "sgemm_128x128_8x4_nn_align1::Params)",
         GemmKind::Fp32Simt},
        {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_"
         "aligna4_alignc4_execute_kernel__5x_cublas",
         GemmKind::Fp32Simt},
        {"void gemmSN_TN_kernel<float, 128, 16, 2, 4, 4, 4, true, cublasGemvTensorStridedBatched"
         "<float const>, cublasGemvTensorStridedBatched<float const>, "
         "cublasGemvTensorStridedBatched<float> >(cublasGemmSmallNParams<float const, float>)",
         GemmKind::Fp32Simt},
        {"magmablas_sgemm_kernel_nn_64x64", GemmKind::Fp32Simt},
    });
}

TEST_CASE("GEMMs on tensor cores are not FP32 GEMMs, TF32 included", "[analyzer][gemm]") {
    checkAll({
        // s1688 on Ampere: FP32 data, TF32 tensor-core math (allow_tf32), real.
        {"void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_32x5_tn_align4>(cutlass_80_"
         "tensorop_s1688gemm_128x128_32x5_tn_align4::Params)",
         GemmKind::TensorCore},
        {"ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_64x4_tn", GemmKind::TensorCore},
        {"volta_h884gemm_64x64_ldg8_nn", GemmKind::TensorCore},
        {"turing_fp16_s1688gemm_fp16_256x128_ldg8_f2f_tn", GemmKind::TensorCore},
        {"sm80_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x16_stage4_warpsize2x2x1_"
         "tensor16x8x8_execute_kernel__5x_cublas",
         GemmKind::TensorCore},
        {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
         "execute_segment_k_off_kernel__5x_cublas",
         GemmKind::TensorCore},
        {"nvjet_hsh_128x256_64x4_2x1_v_bz_coopA_NTT", GemmKind::TensorCore},
        {"void cutlass::Kernel<cutlass_80_wmma_tensorop_s161616gemm_f16_32x32_128x2_tn_align8>("
         "cutlass_80_wmma_tensorop_s161616gemm_f16_32x32_128x2_tn_align8::Params)",
         GemmKind::TensorCore},
        {"ampere_i8816gemm_int8_128x128_ldg16_nt", GemmKind::TensorCore},
    });
}

TEST_CASE("FP64, complex, half on CUDA cores, matrix-vector and k=1 products are other GEMMs",
          "[analyzer][gemm]") {
    checkAll({
        {"volta_dgemm_128x64_nn", GemmKind::Other},
        {"void cutlass::Kernel<cutlass_80_tensorop_d884gemm_128x128_16x3_nn_align1>(cutlass_80_"
         "tensorop_d884gemm_128x128_16x3_nn_align1::Params)",
         GemmKind::Other},
        {"ampere_cgemm_32x32_tn", GemmKind::Other},
        {"volta_hgemm_128x64_nn", GemmKind::Other},
        // Matrix-vector and rank-1 kernels are bound by memory: tensor cores would not help.
        {"void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, "
         "false, cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
         "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
         "float> >(cublasGemvParams<cublasGemvTensorStridedBatched<float const>, "
         "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, "
         "float>, float, float)",
         GemmKind::Other},
        {"void gemvNSP_kernel<float, float, float, float, 1, 32, 4, 1024, cublasGemvParams<"
         "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float "
         "const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<"
         "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float "
         "const>, cublasGemvTensorStridedBatched<float>, float>)",
         GemmKind::Other}, // real
        {"std::enable_if<!(false), void>::type internal::gemvx::kernel<int, int, float, float, "
         "float, float, false, true, true, false, 7, cublasGemvParams<"
         "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float "
         "const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParams<"
         "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float "
         "const>, cublasGemvTensorStridedBatched<float>, float>)",
         GemmKind::Other}, // real
        {"void gemmk1_kernel<float, 256, 5, false, false, false, false, "
         "cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float "
         "const>, cublasGemvTensorStridedBatched<float>, float, true, true>(cublasGemmk1Params<"
         "float, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<"
         "float const>, cublasGemvTensorStridedBatched<float>, float>)",
         GemmKind::Other}, // real
        {"gemm", GemmKind::Other},
    });
}

TEST_CASE("kernels that only mention gemm or float are not GEMMs", "[analyzer][gemm]") {
    checkAll({
        // FBGEMM's embedding kernels: "fbgemm" and "float" in the name, no matrix product (real).
        {"void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<"
         "c10::Half, float, c10::Half, 2ul, 32>(at::GenericPackedTensorAccessor<float, 2ul, "
         "at::RestrictPtrTraits, long>, at::GenericPackedTensorAccessor<c10::Half, 1ul, "
         "at::RestrictPtrTraits, long>)",
         GemmKind::None},
        {"void split_embedding_codegen_forward_unweighted_kernel<c10::Half, c10::Half, float, "
         "false, long, 2ul, 32ul>(at::GenericPackedTensorAccessor<c10::Half, 1ul, "
         "at::RestrictPtrTraits, long>)",
         GemmKind::None},
        {"void fbgemm_gpu::(anonymous namespace)::_get_FP8_qparam_cuda_kernel<float>(float "
         "const*, int, int, unsigned char*, float*, bool)",
         GemmKind::None},
        {"void at::native::vectorized_elementwise_kernel<4, fbgemm_gpu::_float_to_hfp8_gpu("
         "at::Tensor const&, long, long, double)::{lambda(float)#1}, at::detail::Array<char*, 2> "
         ">(int, fbgemm_gpu::_float_to_hfp8_gpu(at::Tensor const&, long, long, double)::{lambda("
         "float)#1}, at::detail::Array<char*, 2>)",
         GemmKind::None},
        {"void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
         GemmKind::None},
        // Elementwise and reduction kernels of float, the cuBLAS split-K reduction and epilogue.
        {"void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, "
         "float, float, at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, "
         "3> >(int, at::native::BinaryFunctor<float, float, float, "
         "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3>)",
         GemmKind::None},
        {"void splitKreduce_kernel<float, float, float, float, true, false, false>("
         "cublasSplitKParams<float>, float const*, float const*, float*, float const*, float "
         "const*, float const*, float const*, float*, void*, long, float*, int*)",
         GemmKind::None},
        {"void epilogue::impl::globalKernel<float, float, float, true, true>(int, int, long, "
         "float*, cublasLtEpilogue_t, int, float*, long, void*, long, long, long, float*, long, "
         "int*)",
         GemmKind::None},
        // A parameter type that mentions a GEMM does not make the kernel one.
        {"void my_reduce_kernel<float>(gemm_params<float>)", GemmKind::None},
        // cuDNN convolutions and Triton GEMMs do not say their precision in their names.
        {"void implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, "
         "true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, "
         "unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
         GemmKind::None},
        {"triton_tem_fused_mm_0", GemmKind::None},
        {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
         GemmKind::None},
    });
}

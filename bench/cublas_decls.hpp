// The few cuBLAS / cuBLASLt (CUDA 12/13) types, enum values and prototypes omnigemm-bench uses,
// declared here so that the bench needs no CUDA headers. The values are those of cublas_api.h,
// cublasLt.h and library_types.h; check_vendor_decls.cpp compares them with the real headers
// whenever those exist at build time.
#pragma once

#include <cstddef>
#include <cstdint>

namespace omnigemm::bench::cu {
using status = int;  // cublasStatus_t, 0 = CUBLAS_STATUS_SUCCESS
using handle = void*;
enum : int { OP_N = 0, OP_T = 1 };                                  // cublasOperation_t
enum : int { R_32F = 0, R_16F = 2, R_16BF = 14, R_8F_E4M3 = 28 };  // cudaDataType
enum : int { COMPUTE_32F = 68, COMPUTE_32F_FAST_TF32 = 77 };                                   // cublasComputeType_t
enum : int { GEMM_DEFAULT = -1 };                                  // cublasGemmAlgo_t
enum : int { LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4,                // cublasLtMatmulDescAttributes_t
              LT_DESC_A_SCALE_POINTER = 17, LT_DESC_B_SCALE_POINTER = 18,
              LT_DESC_A_SCALE_MODE = 31, LT_DESC_B_SCALE_MODE = 32 };
enum : int { LT_DESC_EPILOGUE = 7, LT_DESC_BIAS_POINTER = 8 };  // cublasLtMatmulDescAttributes_t
enum : int { LT_EPI_DEFAULT = 1, LT_EPI_RELU = 2, LT_EPI_BIAS = 4, LT_EPI_RELU_BIAS = 6,  // cublasLtEpilogue_t
             LT_EPI_GELU = 32, LT_EPI_GELU_BIAS = 36 };
enum : int { LT_SCALE_VEC128_32F = 4, LT_SCALE_BLK128x128_32F = 5 };  // cublasLtMatmulMatrixScale_t
enum : int { LT_PREF_MAX_WORKSPACE_BYTES = 1 };                    // cublasLtMatmulPreferenceAttributes_t
struct lt_algo { uint64_t data[8]; };
struct lt_heuristic { lt_algo algo; size_t workspace_size; status state; float waves; int reserved[4]; };

using create_fn = status (*)(handle*);
using get_version_fn = status (*)(handle, int*);
using gemm_ex_fn = status (*)(handle, int, int, int, int, int, const void*, const void*, int, int, const void*, int,
                              int, const void*, void*, int, int, int, int);
using gemm_strided_batched_ex_fn = status (*)(handle, int, int, int, int, int, const void*, const void*, int, int,
                                              long long, const void*, int, int, long long, const void*, void*, int, int,
                                              long long, int, int, int);
using lt_create_fn = status (*)(handle*);
using lt_desc_create_fn = status (*)(void**, int, int);
using lt_desc_destroy_fn = status (*)(void*);
using lt_desc_set_fn = status (*)(void*, int, const void*, size_t);
using lt_layout_create_fn = status (*)(void**, int, uint64_t, uint64_t, int64_t);
using lt_layout_destroy_fn = status (*)(void*);
using lt_pref_create_fn = status (*)(void**);
using lt_pref_destroy_fn = status (*)(void*);
using lt_pref_set_fn = status (*)(void*, int, const void*, size_t);
using lt_heuristic_fn = status (*)(handle, void*, void*, void*, void*, void*, void*, int, lt_heuristic*, int*);
using lt_matmul_fn = status (*)(handle, void*, const void*, const void*, void*, const void*, void*, const void*,
                                const void*, void*, void*, void*, const lt_algo*, void*, size_t, void*);
}  // namespace cu

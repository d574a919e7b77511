// Compile-time check (built only where the CUDA headers exist) that cublas_decls.hpp matches the
// real cuBLAS / cuBLASLt headers: enum values, struct layouts and function signatures.
#include <cublasLt.h>
#include <cublas_v2.h>

#include <type_traits>

#include "cublas_decls.hpp"

namespace cu = omnigemm::bench::cu;

static_assert(int(cu::OP_N) == int(CUBLAS_OP_N) && int(cu::OP_T) == int(CUBLAS_OP_T));
static_assert(int(cu::R_32F) == int(CUDA_R_32F) && int(cu::R_16F) == int(CUDA_R_16F) && int(cu::R_16BF) == int(CUDA_R_16BF) &&
              int(cu::R_8F_E4M3) == int(CUDA_R_8F_E4M3));
static_assert(int(cu::COMPUTE_32F) == int(CUBLAS_COMPUTE_32F) && int(cu::GEMM_DEFAULT) == int(CUBLAS_GEMM_DEFAULT));
static_assert(int(cu::COMPUTE_32F_FAST_TF32) == int(CUBLAS_COMPUTE_32F_FAST_TF32));
static_assert(int(cu::LT_DESC_TRANSA) == int(CUBLASLT_MATMUL_DESC_TRANSA) && int(cu::LT_DESC_TRANSB) == int(CUBLASLT_MATMUL_DESC_TRANSB));
static_assert(int(cu::LT_PREF_MAX_WORKSPACE_BYTES) == int(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES));
static_assert(int(cu::LT_DESC_A_SCALE_POINTER) == int(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER) &&
              int(cu::LT_DESC_B_SCALE_POINTER) == int(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER) &&
              int(cu::LT_DESC_A_SCALE_MODE) == int(CUBLASLT_MATMUL_DESC_A_SCALE_MODE) &&
              int(cu::LT_DESC_B_SCALE_MODE) == int(CUBLASLT_MATMUL_DESC_B_SCALE_MODE));
static_assert(int(cu::LT_DESC_EPILOGUE) == int(CUBLASLT_MATMUL_DESC_EPILOGUE) &&
              int(cu::LT_DESC_BIAS_POINTER) == int(CUBLASLT_MATMUL_DESC_BIAS_POINTER));
static_assert(int(cu::LT_EPI_DEFAULT) == int(CUBLASLT_EPILOGUE_DEFAULT) && int(cu::LT_EPI_RELU) == int(CUBLASLT_EPILOGUE_RELU) &&
              int(cu::LT_EPI_BIAS) == int(CUBLASLT_EPILOGUE_BIAS) && int(cu::LT_EPI_RELU_BIAS) == int(CUBLASLT_EPILOGUE_RELU_BIAS) &&
              int(cu::LT_EPI_GELU) == int(CUBLASLT_EPILOGUE_GELU) && int(cu::LT_EPI_GELU_BIAS) == int(CUBLASLT_EPILOGUE_GELU_BIAS));
static_assert(int(cu::LT_SCALE_VEC128_32F) == int(CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F) &&
              int(cu::LT_SCALE_BLK128x128_32F) == int(CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F));
static_assert(sizeof(cu::lt_algo) == sizeof(cublasLtMatmulAlgo_t));
static_assert(sizeof(cu::lt_heuristic) == sizeof(cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(cu::lt_heuristic, workspace_size) == offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(cu::lt_heuristic, state) == offsetof(cublasLtMatmulHeuristicResult_t, state));
static_assert(sizeof(cu::status) == sizeof(cublasStatus_t));

// Every pointer type we cast dlsym results to must accept the real function (same arity, and
// parameter types that are ABI-identical: enums as int, opaque handles as void*).
template <class F>
struct arity;
template <class R, class... A>
struct arity<R (*)(A...)> { static constexpr size_t value = sizeof...(A); };
template <class Ours, class Theirs>
constexpr bool same_arity(Theirs) { return arity<Ours>::value == arity<Theirs>::value; }
static_assert(same_arity<cu::gemm_ex_fn>(static_cast<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*, cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t)>(&cublasGemmEx)));
static_assert(same_arity<cu::gemm_strided_batched_ex_fn>(static_cast<cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*, cudaDataType, int, long long, const void*, cudaDataType, int, long long, const void*, void*, cudaDataType, int, long long, int, cublasComputeType_t, cublasGemmAlgo_t)>(&cublasGemmStridedBatchedEx)));
static_assert(same_arity<cu::lt_matmul_fn>(&cublasLtMatmul));
static_assert(same_arity<cu::lt_heuristic_fn>(&cublasLtMatmulAlgoGetHeuristic));
static_assert(same_arity<cu::lt_layout_create_fn>(&cublasLtMatrixLayoutCreate));
static_assert(same_arity<cu::lt_desc_create_fn>(&cublasLtMatmulDescCreate));
static_assert(same_arity<cu::lt_desc_set_fn>(&cublasLtMatmulDescSetAttribute));
static_assert(same_arity<cu::lt_pref_set_fn>(&cublasLtMatmulPreferenceSetAttribute));

int main() { return 0; }

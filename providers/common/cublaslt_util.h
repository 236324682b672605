// What the CUDA provider's matmul and the nccl provider's overlapped GEMMs
// both ask of cuBLASLt: the CUDA type of a dtype, and the best algorithm for
// operands of a given alignment. Header-only: providers/common itself does
// not link CUDA.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <optional>

#include "brt/provider_abi.h"

namespace brt::ops {

// f32, f16 and bf16; nothing for other dtypes.
inline std::optional<cudaDataType_t> CublasLtType(int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return CUDA_R_32F;
    case BRT_DTYPE_F16:
      return CUDA_R_16F;
    case BRT_DTYPE_BF16:
      return CUDA_R_16BF;
  }
  return std::nullopt;
}

// The best algorithm for desc on layouts a, b, c (c also the output) whose
// pointers are aligned to `alignment` bytes, within `workspace_bytes`; false
// when cuBLASLt has none (or fails). Makes its own handle when given none.
inline bool FindCublasLtAlgorithm(cublasLtHandle_t handle, cublasLtMatmulDesc_t desc,
                                  cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                  cublasLtMatrixLayout_t c, uint32_t alignment,
                                  uint64_t workspace_bytes, cublasLtMatmulHeuristicResult_t* algo) {
  cublasLtHandle_t own = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  int found = 0;
  cublasStatus_t s = CUBLAS_STATUS_SUCCESS;
  if (!handle) s = cublasLtCreate(&own), handle = own;
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceCreate(&pref);
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace_bytes, sizeof(workspace_bytes));
  for (auto attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulPreferenceSetAttribute(pref, attr, &alignment, sizeof(alignment));
  if (s == CUBLAS_STATUS_SUCCESS)
    s = cublasLtMatmulAlgoGetHeuristic(handle, desc, a, b, c, c, pref, 1, algo, &found);
  if (pref) cublasLtMatmulPreferenceDestroy(pref);
  if (own) cublasLtDestroy(own);
  return s == CUBLAS_STATUS_SUCCESS && found > 0;
}

}  // namespace brt::ops

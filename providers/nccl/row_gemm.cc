#include "row_gemm.h"

#include <stdexcept>
#include <string>

#include "brt/provider_abi.h"
#include "common/cublaslt_util.h"

namespace brt::nccl {
namespace {

void Check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusString(s));
}

cudaDataType_t CudaType(int32_t dtype) {
  if (auto t = ops::CublasLtType(dtype)) return *t;
  throw std::runtime_error(std::string("the overlapped GEMM takes f32, f16 and bf16, not ") +
                           brt_dtype_name(dtype));
}

}  // namespace

RowGemm::~RowGemm() {
  if (desc_) cublasLtMatmulDescDestroy(desc_);
  for (cublasLtMatrixLayout_t l : {a_, b_, c_})
    if (l) cublasLtMatrixLayoutDestroy(l);
}

// Row-major out = lhs x rhs is column-major out^T = rhs^T x lhs^T: cuBLAS's
// A is the rhs (op T when it is stored [n, k]), its B the lhs, m = n.
void RowGemm::Prepare(int32_t dtype, int64_t rows, int64_t k, int64_t n, bool rhs_transposed) {
  const cudaDataType_t t = CudaType(dtype);
  element_bytes_ = brt_dtype_size(dtype);
  Check(cublasLtMatmulDescCreate(&desc_, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate");
  const cublasOperation_t ta = rhs_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
        "cublasLtMatmulDescSetAttribute");
  Check(rhs_transposed ? cublasLtMatrixLayoutCreate(&a_, t, k, n, k)
                       : cublasLtMatrixLayoutCreate(&a_, t, n, k, n),
        "cublasLtMatrixLayoutCreate");
  Check(cublasLtMatrixLayoutCreate(&b_, t, k, rows, k), "cublasLtMatrixLayoutCreate");
  Check(cublasLtMatrixLayoutCreate(&c_, t, n, rows, n), "cublasLtMatrixLayoutCreate");
  cublasLtHandle_t handle = nullptr;
  Check(cublasLtCreate(&handle), "cublasLtCreate");
  const bool aligned =
      ops::FindCublasLtAlgorithm(handle, desc_, a_, b_, c_, 256, kWorkspaceBytes, &aligned_);
  const bool unaligned =
      ops::FindCublasLtAlgorithm(handle, desc_, a_, b_, c_, static_cast<uint32_t>(element_bytes_),
                                 kWorkspaceBytes, &unaligned_);
  cublasLtDestroy(handle);
  if (!aligned || !unaligned)
    throw std::runtime_error("cuBLASLt has no algorithm for a " + std::to_string(rows) + "x" +
                             std::to_string(k) + " by " + std::to_string(k) + "x" +
                             std::to_string(n) + " " + brt_dtype_name(dtype) + " GEMM");
}

void RowGemm::Run(cublasLtHandle_t handle, const void* lhs, const void* rhs, void* out,
                  bool accumulate, void* workspace, cudaStream_t stream) const {
  const float one = 1.0f, beta = accumulate ? 1.0f : 0.0f;
  const auto bits = reinterpret_cast<uintptr_t>(lhs) | reinterpret_cast<uintptr_t>(rhs) |
                    reinterpret_cast<uintptr_t>(out);
  const cublasLtMatmulAlgo_t* algo = bits % 256 == 0 ? &aligned_.algo : &unaligned_.algo;
  Check(cublasLtMatmul(handle, desc_, &one, rhs, a_, lhs, b_, &beta, out, c_, out, c_, algo,
                       workspace, kWorkspaceBytes, stream),
        "cublasLtMatmul");
}

}  // namespace brt::nccl

// One row-major GEMM shape through cuBLASLt, run on any block of rows:
// out[rows, n] = lhs[rows, k] x rhs (+ out when accumulating), rhs [k, n]
// or [n, k] (rhs_transposed); f32, f16 or bf16 with f32 accumulation. The
// overlapped kernels run it once per chunk; bench/chunked_gemm_bench.cc
// measures what splitting one GEMM into chunks costs.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace brt::nccl {

class RowGemm {
 public:
  static constexpr size_t kWorkspaceBytes = 32u << 20;
  RowGemm() = default;
  RowGemm(const RowGemm&) = delete;
  RowGemm& operator=(const RowGemm&) = delete;
  ~RowGemm();
  // Throws std::runtime_error naming what cuBLASLt refused.
  void Prepare(int32_t dtype, int64_t rows, int64_t k, int64_t n, bool rhs_transposed);
  // `workspace` holds kWorkspaceBytes of device memory.
  void Run(cublasLtHandle_t handle, const void* lhs, const void* rhs, void* out, bool accumulate,
           void* workspace, cudaStream_t stream) const;

 private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  // Pointers 256-byte aligned (cuBLASLt's default assumption) take the
  // first; any others the second, found for element alignment.
  cublasLtMatmulHeuristicResult_t aligned_{}, unaligned_{};
  size_t element_bytes_ = 4;
};

}  // namespace brt::nccl

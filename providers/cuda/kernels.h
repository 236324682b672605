// Launchers for brt's own CUDA kernels (kernels.cu), callable from host C++.
#pragma once

#include <cuda_runtime.h>

#include "brt/provider_abi.h"

namespace brt::cuda {

constexpr int kMaxRank = 8;

enum UnaryOp {
  kNegate,
  kAbs,
  kExp,
  kLog,
  kTanh,
  kLogistic,
  kSqrt,
  kRsqrt,
  kFloor,
  kCeil,
  kSin,
  kCos,
  kGeluErf,
  kRelu
};
enum BinaryOp { kAdd = 100, kSubtract, kMultiply, kDivide, kMaximum, kMinimum, kPower };

// out[i] = op(a[...], b[...]) over the result's row-major index space; the
// strides (in elements) are 0 on broadcast dims. b is null for unary ops.
struct ElementwiseParams {
  int op;
  int rank;
  long long n;
  long long dims[kMaxRank];
  long long a_strides[kMaxRank];
  long long b_strides[kMaxRank];
};

cudaError_t LaunchElementwise(const ElementwiseParams& p, int dtype, const void* a, const void* b,
                              void* out, cudaStream_t stream);

}  // namespace brt::cuda

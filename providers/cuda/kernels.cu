// brt's own CUDA kernels: elementwise ops with NumPy-style broadcasting (any
// rank up to kMaxRank, per-operand strides, 0 on broadcast dims) in f32, f16
// and bf16 (computed in f32), and the activations that follow a cuBLASLt
// matmul when its epilogue cannot express them (tanh, exact GELU).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "kernels.h"

namespace brt::cuda {
namespace {

template <typename T>
__device__ float Load(const T* p, long long i) {
  return static_cast<float>(p[i]);
}
template <typename T>
__device__ void Store(T* p, long long i, float v) {
  p[i] = static_cast<T>(v);
}

__device__ float Unary(int op, float a) {
  switch (op) {
    case kNegate:
      return -a;
    case kAbs:
      return fabsf(a);
    case kExp:
      return expf(a);
    case kLog:
      return logf(a);
    case kTanh:
      return tanhf(a);
    case kLogistic:
      return 1.f / (1.f + expf(-a));
    case kSqrt:
      return sqrtf(a);
    case kRsqrt:
      return rsqrtf(a);
    case kFloor:
      return floorf(a);
    case kCeil:
      return ceilf(a);
    case kSin:
      return sinf(a);
    case kCos:
      return cosf(a);
    case kGeluErf:
      return 0.5f * a * (1.f + erff(a * 0.70710678118654752f));
    case kRelu:
      return a > 0.f ? a : (a != a ? a : 0.f);
  }
  return a;
}

__device__ float Binary(int op, float a, float b) {
  switch (op) {
    case kAdd:
      return a + b;
    case kSubtract:
      return a - b;
    case kMultiply:
      return a * b;
    case kDivide:
      return a / b;
    case kMaximum:
      return (a > b || a != a) ? a : b;  // NaN propagates
    case kMinimum:
      return (a < b || a != a) ? a : b;
    case kPower:
      return powf(a, b);
  }
  return a;
}

template <typename T>
__global__ void ElementwiseKernel(ElementwiseParams p, const T* a, const T* b, T* out) {
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < p.n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    long long oa = 0, ob = 0, r = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      const long long idx = r % p.dims[d];
      r /= p.dims[d];
      oa += idx * p.a_strides[d];
      ob += idx * p.b_strides[d];
    }
    const float x = Load(a, oa);
    Store(out, i, b ? Binary(p.op, x, Load(b, ob)) : Unary(p.op, x));
  }
}

int Blocks(long long n) {
  const long long blocks = (n + 255) / 256;
  return static_cast<int>(blocks < 65536 ? (blocks > 0 ? blocks : 1) : 65536);
}

}  // namespace

cudaError_t LaunchElementwise(const ElementwiseParams& p, int dtype, const void* a, const void* b,
                              void* out, cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  switch (dtype) {
    case BRT_DTYPE_F32:
      ElementwiseKernel<<<Blocks(p.n), 256, 0, stream>>>(
          p, static_cast<const float*>(a), static_cast<const float*>(b), static_cast<float*>(out));
      break;
    case BRT_DTYPE_F16:
      ElementwiseKernel<<<Blocks(p.n), 256, 0, stream>>>(p, static_cast<const __half*>(a),
                                                         static_cast<const __half*>(b),
                                                         static_cast<__half*>(out));
      break;
    case BRT_DTYPE_BF16:
      ElementwiseKernel<<<Blocks(p.n), 256, 0, stream>>>(p, static_cast<const __nv_bfloat16*>(a),
                                                         static_cast<const __nv_bfloat16*>(b),
                                                         static_cast<__nv_bfloat16*>(out));
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace brt::cuda

// What brt's CUDA kernel files (kernels_*.cu) share: element types and their
// compute types, dtype dispatch, the launch (a real launch, or block by block
// on the host under the emulation), grid sizing and broadcast offsets. The
// scalar semantics come from common/scalar_ops.h and the layouts from
// common/op_plans.h, so the kernels match the CPU provider; 16-bit floats
// compute in f32, i1 is one byte. Internal to the kernel files: everything is
// in an unnamed namespace, one copy per file.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cuda/std/complex>

#include <algorithm>
#include <cstdint>

#include "kernels.h"

// c64 and c128 in the kernels are cuda::std::complex, whose math functions
// run on the device (and on the host under the emulation); ops/complex_ops.h
// computes on it as on std::complex.
namespace brt::ops {
template <typename T>
constexpr bool kIsComplex<::cuda::std::complex<T>> = true;
}  // namespace brt::ops

#ifdef BRT_CUDA_EMULATION
#include "emulation.h"
#endif

namespace brt::cuda {

using ops::Activation;
using ops::Binary;
using ops::Cmp;
using ops::Reducer;
using ops::Unary;

namespace {

// i1 storage: one byte, any non-zero byte reads as true.
struct Bool8 {
  unsigned char v;
};

// Storage type -> compute type, and the conversions between them.
template <typename T>
struct Num {
  using C = T;
  __device__ static C Load(T x) { return x; }
  __device__ static T Store(C x) { return x; }
};
template <>
struct Num<__half> {
  using C = float;
  __device__ static C Load(__half x) { return __half2float(x); }
  __device__ static __half Store(C x) { return __float2half_rn(x); }
};
template <>
struct Num<__nv_bfloat16> {
  using C = float;
  __device__ static C Load(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 Store(C x) { return __float2bfloat16_rn(x); }
};
template <>
struct Num<Bool8> {
  using C = bool;
  __device__ static C Load(Bool8 x) { return x.v != 0; }
  __device__ static Bool8 Store(C x) { return Bool8{static_cast<unsigned char>(x ? 1 : 0)}; }
};

template <typename T>
__device__ typename Num<T>::C LoadAt(const void* p, long long i) {
  return Num<T>::Load(static_cast<const T*>(p)[i]);
}
template <typename T>
__device__ void StoreAt(void* p, long long i, typename Num<T>::C v) {
  static_cast<T*>(p)[i] = Num<T>::Store(v);
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the storage type of a dtype; false for an unknown one.
// Kernels may call it too, with a lambda of their own.
#ifdef __CUDACC__
#pragma nv_exec_check_disable
#endif
template <typename F>
__host__ __device__ bool Dispatch(int32_t dtype, F&& f) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return f(Tag<float>{}), true;
    case BRT_DTYPE_F16:
      return f(Tag<__half>{}), true;
    case BRT_DTYPE_BF16:
      return f(Tag<__nv_bfloat16>{}), true;
    case BRT_DTYPE_F64:
      return f(Tag<double>{}), true;
    case BRT_DTYPE_I1:
      return f(Tag<Bool8>{}), true;
    case BRT_DTYPE_I8:
      return f(Tag<int8_t>{}), true;
    case BRT_DTYPE_I16:
      return f(Tag<int16_t>{}), true;
    case BRT_DTYPE_I32:
      return f(Tag<int32_t>{}), true;
    case BRT_DTYPE_I64:
      return f(Tag<int64_t>{}), true;
    case BRT_DTYPE_U8:
      return f(Tag<uint8_t>{}), true;
    case BRT_DTYPE_U16:
      return f(Tag<uint16_t>{}), true;
    case BRT_DTYPE_U32:
      return f(Tag<uint32_t>{}), true;
    case BRT_DTYPE_U64:
      return f(Tag<uint64_t>{}), true;
  }
  return false;
}

// Dispatch, and cuda::std::complex for c64 and c128: for the kernels that
// have complex forms (elementwise ones; the others need not compile for them).
template <typename F>
bool DispatchOrComplex(int32_t dtype, F&& f) {
  if (dtype == BRT_DTYPE_C64) return f(Tag<::cuda::std::complex<float>>{}), true;
  if (dtype == BRT_DTYPE_C128) return f(Tag<::cuda::std::complex<double>>{}), true;
  return Dispatch(dtype, f);
}

constexpr int kThreads = 256;

// A kernel launch in stream order; the host emulation runs it on the calling
// thread, block after block.
template <typename... P, typename... A>
void Launch(void (*kernel)(P...), dim3 grid, unsigned block, cudaStream_t stream, A&&... args) {
#ifdef BRT_CUDA_EMULATION
  (void)block, (void)stream;
  emulation::Run(grid, [&] { kernel(static_cast<P>(args)...); });
#else
  // clang-format off
  kernel<<<grid, block, 0, stream>>>(static_cast<P>(args)...);
  // clang-format on
#endif
}

cudaError_t LastError() {
#ifdef BRT_CUDA_EMULATION
  return cudaSuccess;
#else
  return cudaGetLastError();
#endif
}

unsigned Blocks(long long n, int per_block = kThreads) {
  const long long blocks = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<long long>(1, std::min<long long>(blocks, 1 << 20)));
}

#define BRT_GRID_STRIDE(i, n)                                                                \
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

// Offsets of element i of a Space for its first `count` operands.
__device__ void Offsets(const Space& s, long long i, int count, long long* off) {
  for (int k = 0; k < count; ++k) off[k] = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const long long idx = i % s.dims[d];
    i /= s.dims[d];
    for (int k = 0; k < count; ++k) off[k] += idx * s.strides[k][d];
  }
}

// The operand offset of element k of the window at result index o_idx
// (reduce_window, select_and_scatter); false where the element falls in the
// padding or between base-dilated elements.
__device__ bool WindowElement(const ReduceWindowParams& p, const long long* o_idx, long long k,
                              long long* off) {
  bool inside = true;
  *off = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const long long wi = k % p.window[d];
    k /= p.window[d];
    long long pos = o_idx[d] * p.strides[d] + wi * p.win_dil[d] - p.pad_lo[d];
    if (pos < 0 || pos % p.base_dil[d] != 0) inside = false;
    pos /= p.base_dil[d];
    if (pos >= p.in_dims[d]) inside = false;
    *off += pos * p.in_strides[d];
  }
  return inside;
}

}  // namespace
}  // namespace brt::cuda

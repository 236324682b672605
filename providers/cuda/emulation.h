// Host emulation of the few CUDA kernel-language pieces kernels_*.cu use, so
// its kernels can be compiled as C++ and tested on machines without a GPU
// (tests/plugins/emulated_cuda_provider.cc). Blocks run one after another on
// the calling thread with one thread each: grid-stride loops then cover
// everything and block reductions have nothing to combine. What this cannot
// check: warp shuffles, races between threads, and launch limits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <type_traits>

namespace brt::cuda::emulation {

inline thread_local dim3 block_idx, thread_idx, block_dim, grid_dim;

template <typename F>
void Run(dim3 grid, F&& body) {
  grid_dim = grid;
  block_dim = dim3(1, 1, 1);
  thread_idx = dim3(0, 0, 0);
  for (unsigned y = 0; y < grid.y; ++y)
    for (unsigned x = 0; x < grid.x; ++x) {
      block_idx = dim3(x, y, 0);
      body();
    }
}

}  // namespace brt::cuda::emulation

#define blockIdx ::brt::cuda::emulation::block_idx
#define threadIdx ::brt::cuda::emulation::thread_idx
#define blockDim ::brt::cuda::emulation::block_dim
#define gridDim ::brt::cuda::emulation::grid_dim
#define __syncthreads() ((void)0)
#define __threadfence() ((void)0)
#undef __shared__
#define __shared__ static

inline float rsqrtf(float x) { return 1.f / std::sqrt(x); }

// Atomics: one thread at a time, so plain read-modify-write. Each takes only
// the types CUDA's does, so a kernel that compiles here compiles for the GPU.
template <typename T>
T atomicAdd(T* address, T value) {
  static_assert(std::is_same_v<T, int> || std::is_same_v<T, unsigned int> ||
                std::is_same_v<T, unsigned long long> || std::is_same_v<T, float> ||
                std::is_same_v<T, double> || std::is_same_v<T, __half> ||
                std::is_same_v<T, __nv_bfloat16>);
  const T old = *address;
  if constexpr (std::is_same_v<T, __half>)
    *address = __float2half_rn(__half2float(old) + __half2float(value));
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    *address = __float2bfloat16_rn(__bfloat162float(old) + __bfloat162float(value));
  else if constexpr (std::is_integral_v<T>)  // wraps, as the GPU's does
    *address = static_cast<T>(static_cast<std::make_unsigned_t<T>>(old) +
                              static_cast<std::make_unsigned_t<T>>(value));
  else
    *address = old + value;
  return old;
}

template <typename T>
T atomicCAS(T* address, T compare, T value) {
  static_assert(std::is_same_v<T, unsigned short> || std::is_same_v<T, unsigned int> ||
                std::is_same_v<T, unsigned long long>);
  const T old = *address;
  if (old == compare) *address = value;
  return old;
}

template <typename T>
T atomicExch(T* address, T value) {
  static_assert(std::is_same_v<T, unsigned int> || std::is_same_v<T, unsigned long long>);
  const T old = *address;
  *address = value;
  return old;
}

// atomicMax and atomicMin: 4- and 8-byte integers.
template <typename T>
constexpr bool kHasAtomicMinMax =
    std::is_same_v<T, int> || std::is_same_v<T, unsigned int> || std::is_same_v<T, long long> ||
    std::is_same_v<T, unsigned long long>;

template <typename T>
T atomicMax(T* address, T value) {
  static_assert(kHasAtomicMinMax<T>);
  const T old = *address;
  if (value > old) *address = value;
  return old;
}

template <typename T>
T atomicMin(T* address, T value) {
  static_assert(kHasAtomicMinMax<T>);
  const T old = *address;
  if (value < old) *address = value;
  return old;
}

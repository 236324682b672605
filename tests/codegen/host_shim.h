// Compiles brt-compile's generated CUDA C as host C++, so tests can check its
// numerics without a GPU. A launch runs the grid's blocks one after another
// and each block's threads as real threads, interleaved by the OS:
// __syncthreads is a barrier and __shared__ arrays are shared by the block,
// so block reductions are checked as a GPU runs them, not as one thread would.
//
// The test compiles a wrapper that includes this header, the kernel source,
// and defines brt_host_launch with BRT_SHIM_LAUNCHER(kernel_name).
#pragma once
#define BRT_HOST_SHIM 1
#define BRT_RESTRICT
#define __global__
#define __shared__ static
#include <math.h>

#include <barrier>
#include <cmath>
#include <cstring>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

struct brt_dim3 {
  unsigned x;
};
inline thread_local brt_dim3 threadIdx = {0}, blockIdx = {0};
inline brt_dim3 blockDim = {1}, gridDim = {1};
inline std::barrier<>* brt_block_barrier = nullptr;

static inline void __syncthreads() { brt_block_barrier->arrive_and_wait(); }
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
static inline float __int_as_float(int i) {
  float f;
  std::memcpy(&f, &i, sizeof f);
  return f;
}
using std::isnan;
#include "../../ops/erfinv.h"
using brt::ops::erfinv;

namespace brt_shim {

// args[i] is the i-th parameter when it is a buffer (a pointer), and points
// at it when it is an extent (a long long), as cuLaunchKernel's are.
template <typename P>
P Parameter(void* arg) {
  if constexpr (std::is_pointer_v<P>)
    return static_cast<P>(arg);
  else
    return *static_cast<const P*>(arg);
}

template <typename... P, size_t... I>
void Call(void (*kernel)(P...), void* const* args, std::index_sequence<I...>) {
  kernel(Parameter<P>(args[I])...);
}

template <typename... P>
void Launch(void (*kernel)(P...), unsigned grid, unsigned block, void* const* args) {
  gridDim = {grid};
  blockDim = {block};
  for (unsigned b = 0; b < grid; ++b) {
    std::barrier<> barrier(block);
    brt_block_barrier = &barrier;
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < block; ++t)
      threads.emplace_back([&, b, t] {
        blockIdx = {b};
        threadIdx = {t};
        Call(kernel, args, std::index_sequence_for<P...>{});
      });
    for (std::thread& th : threads) th.join();
  }
}

}  // namespace brt_shim

#define BRT_SHIM_LAUNCHER(kernel)                                                     \
  extern "C" void brt_host_launch(unsigned grid, unsigned block, void* const* args) { \
    brt_shim::Launch(kernel, grid, block, args);                                      \
  }

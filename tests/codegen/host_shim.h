// Compiles brt-compile's generated CUDA C as host C++ with one thread
// (blockDim = gridDim = 1), so tests can check its numerics without a GPU.
#pragma once
#define BRT_HOST_SHIM 1
#define BRT_RESTRICT
#define __global__
#define __shared__ static
#include <math.h>

#include <cmath>

struct brt_dim3 {
  unsigned x;
};
static const brt_dim3 blockIdx = {0}, threadIdx = {0}, blockDim = {1}, gridDim = {1};
static inline void __syncthreads() {}
static inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
using std::isnan;

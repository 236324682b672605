// What the CUDA benchmarks of the overlapped ops share: CUDA error checks,
// device buffers, random 16- and 32-bit float data, event-timed medians and
// comma-separated options.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "ops/small_floats.h"

namespace brt::bench {

inline void Check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(rc));
}

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { Check(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* c() const { return static_cast<char*>(p); }
};

// Host values of a 16-bit float tensor's bits.
inline float SmallFloatToFloat(uint16_t bits, int32_t dtype) {
  if (dtype == BRT_DTYPE_BF16) return ops::BFloat16(ops::BitsToFloat(uint32_t{bits} << 16));
  ops::Half h;
  h.bits = bits;
  return h;
}

// Random values in [-1, 1) of dtype (f32, f16 or bf16) copied to dst; the
// values as stored, returned in float.
inline std::vector<float> FillRandom(void* dst, size_t elements, int32_t dtype, unsigned seed) {
  std::vector<float> values(elements);
  uint64_t x = 0x9E3779B97F4A7C15ull * (seed + 1);
  for (float& v : values) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    v = static_cast<float>((x >> 40) & 0xFFFFFF) / 8388608.0f - 1.0f;
  }
  if (dtype == BRT_DTYPE_F32) {
    Check(cudaMemcpy(dst, values.data(), elements * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    return values;
  }
  std::vector<uint16_t> bits(elements);
  for (size_t i = 0; i < elements; ++i) {
    bits[i] = dtype == BRT_DTYPE_BF16 ? ops::BFloat16(values[i]).bits : ops::Half(values[i]).bits;
    values[i] = SmallFloatToFloat(bits[i], dtype);
  }
  Check(cudaMemcpy(dst, bits.data(), elements * 2, cudaMemcpyHostToDevice), "cudaMemcpy");
  return values;
}

// A 16-bit float tensor's values, in float, once the work queued on
// `stream` before is done (a plain cudaMemcpy is not ordered after a
// non-blocking stream's work).
inline std::vector<float> DownloadSmallFloats(const void* src, size_t elements, int32_t dtype,
                                              cudaStream_t stream) {
  std::vector<uint16_t> bits(elements);
  Check(cudaMemcpyAsync(bits.data(), src, elements * 2, cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
  Check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<float> out(elements);
  for (size_t i = 0; i < elements; ++i) out[i] = SmallFloatToFloat(bits[i], dtype);
  return out;
}

// Median milliseconds of `iters` runs of `body` on `stream`, after three.
inline double MedianMs(int iters, cudaStream_t stream, const std::function<void()>& body) {
  cudaEvent_t a, b;
  Check(cudaEventCreate(&a), "cudaEventCreate");
  Check(cudaEventCreate(&b), "cudaEventCreate");
  for (int i = 0; i < 3; ++i) body();
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    Check(cudaEventRecord(a, stream), "cudaEventRecord");
    body();
    Check(cudaEventRecord(b, stream), "cudaEventRecord");
    Check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float t = 0;
    Check(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

inline std::vector<std::string> SplitCommas(const std::string& s) {
  std::vector<std::string> out;
  for (size_t start = 0;;) {
    const size_t comma = s.find(',', start);
    out.push_back(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

}  // namespace brt::bench

// The CUDA provider's internals shared by its files (and by the host
// emulation that tests its own kernels without a GPU): errors, queues, the
// kernel interface and the kernel table. Not part of any public API.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "common/abi_guard.h"
#include "common/provider_glue.h"
#include "ops/op_plans.h"

namespace brt::cuda {

// Thrown inside prepare/run helpers only, turned into an ABI error at the
// edge by Guard (common/abi_guard.h).
using Error = ops::AbiError;

// Out of device memory stays out of memory for the caller. A failed call
// also leaves its error as the thread's last error, which the next launch's
// cudaGetLastError() would report as its own: it is cleared here.
inline void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error(e == cudaErrorMemoryAllocation ? BRT_ERROR_RESOURCE_EXHAUSTED : BRT_ERROR_INTERNAL,
                std::string(what) + ": " + cudaGetErrorString(e));
  }
}
inline void Check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(s == CUBLAS_STATUS_ALLOC_FAILED ? BRT_ERROR_RESOURCE_EXHAUSTED : BRT_ERROR_INTERNAL,
                std::string(what) + ": cuBLASLt status " + std::to_string(s));
}
inline int32_t Report(BrtErrorBuffer* e, int32_t code, const std::string& message) {
  return ops::ReportAbiError(e, code, message);
}

template <typename F>
int32_t Guard(BrtErrorBuffer* e, F&& f) {
  return ops::AbiGuard(e, std::forward<F>(f));
}

constexpr size_t kMatmulWorkspace = 32u << 20;

// Makes `ordinal` the calling thread's device. Every entry point that works
// on a device calls it: the core (and the caller's threads) may run, record
// and load from any thread, whatever device that thread last used. The host
// emulation has one device and implements it as nothing.
void UseDevice(int ordinal);

// A request context's stream, with the cuBLASLt handle and workspace its
// matmuls share (ops on one stream never overlap).
struct Queue {
  int device = 0;
  cudaStream_t stream = nullptr;
  bool owned = true;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
};

// Device memory and stream-ordered copies for the kernels; the provider
// implements them with the CUDA runtime, the host emulation with libc.
// (UseDevice above is implemented the same way.)
void* DeviceAlloc(size_t bytes);
void DeviceFree(void* p);
// Bytes from host memory, before this returns.
void UploadSync(void* dst, const void* src, size_t bytes);
// In stream order; either side may be host or device memory.
void CopyAsync(void* dst, const void* src, size_t bytes, cudaStream_t stream);
void ZeroAsync(void* dst, size_t bytes, cudaStream_t stream);

using ops::OpInfo;
using ops::TensorInfo;

// What the core runs: a prepared kernel (shared by every request context, so
// Run must not mutate it) or a per-context instance holding scratch memory.
class Runnable {
 public:
  virtual ~Runnable() = default;
  virtual void Run(void* const* b, Queue* q) = 0;
};

class Kernel : public Runnable {
 public:
  // A kernel with per-context state returns a fresh instance; null runs the
  // kernel itself.
  virtual Runnable* NewInstance() const { return nullptr; }
};

// Device memory owned by a kernel or an instance.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) {
    if (bytes) data_ = DeviceAlloc(bytes);
  }
  ~DeviceBuffer() { DeviceFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return data_; }

 private:
  void* data_ = nullptr;
};

// Unary, binary, compare, select, clamp and convert: one kernel over the
// broadcast index space of the operands (kernels_*.cu).
inline const std::vector<int32_t> kAll = {
    BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64, BRT_DTYPE_I1,
    BRT_DTYPE_I8,  BRT_DTYPE_I16, BRT_DTYPE_I32,  BRT_DTYPE_I64, BRT_DTYPE_U8,
    BRT_DTYPE_U16, BRT_DTYPE_U32, BRT_DTYPE_U64};
// kAll with c64 and c128: the kernels that only move elements, and the
// elementwise ones whose registry domain takes complex values.
inline const std::vector<int32_t> kEveryType = [] {
  std::vector<int32_t> every = kAll;
  every.insert(every.end(), {BRT_DTYPE_C64, BRT_DTYPE_C128});
  return every;
}();
inline const std::vector<int32_t> kFloats = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16,
                                             BRT_DTYPE_F64};
inline const std::vector<int32_t> kHalfAndSingle = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16};
inline const std::vector<int32_t> kNumeric = {
    BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64, BRT_DTYPE_I8,  BRT_DTYPE_I16,
    BRT_DTYPE_I32, BRT_DTYPE_I64, BRT_DTYPE_U8,   BRT_DTYPE_U16, BRT_DTYPE_U32, BRT_DTYPE_U64};

using MakeFn = Kernel* (*)(const OpInfo&);
template <typename K>
Kernel* Make(const OpInfo& op) {
  return new K(op);
}

using TableRow = ops::KernelRow<MakeFn>;

using PrepareFn = int32_t (*)(const void* kernel_data, const BrtOpDesc* op, void** state,
                              BrtErrorBuffer* error);

// The provider's table: brt's own kernels (own_kernels.cc), with matmuls
// (dot_general, brt.matmul), convolutions (convolution, brt.conv) and fft
// made by the given library-backed factories.
std::vector<TableRow> KernelRows(MakeFn matmul, MakeFn convolution, MakeFn fft);
// dot_general / brt.matmul by brt's own kernel, for any layout and dtype.
Kernel* MakeOwnDot(const ops::OpInfo& op);
// dot_general / brt.matmul through cuBLASLt where it takes the op, else the
// own kernel (library_kernels.cc).
Kernel* MakeMatmul(const ops::OpInfo& op);
// convolution / brt.conv through cuDNN (library_kernels.cc).
Kernel* MakeConvolution(const ops::OpInfo& op);
// fft through cuFFT, loaded at the first fft's prepare (fft_kernel.cc).
Kernel* MakeFft(const ops::OpInfo& op);
// The op's generated kernel, from the executable's PTX (generated_kernel.cc).
Kernel* MakeGeneratedKernel(const BrtOpDesc* op);

// The CUDA kernel lifecycle (instances, runs on a queue's device) around a
// provider's `prepare`, which builds a row's kernel.
ops::KernelEntryPoints EntryPoints(PrepareFn prepare);

}  // namespace brt::cuda

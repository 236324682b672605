// A provider built against the first ABI v1 header: its table ends at
// kernel_info, before every field appended since (queues' wrap_queue,
// graphs, events, pinned memory, communicators). The core must load it and
// leave those fields alone. It negates f32 tensors.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "brt/provider_abi.h"

namespace {

int32_t DeviceCount() { return 1; }

int32_t Prepare(const void*, const BrtOpDesc* op, void** state, BrtErrorBuffer*) {
  int64_t n = 1;
  for (int32_t d = 0; d < op->results[0].rank; ++d) n *= op->results[0].dims[d];
  *state = reinterpret_cast<void*>(static_cast<intptr_t>(n));
  return BRT_OK;
}

void ReleaseState(void*) {}

int32_t Run(void* state, void* const* buffers, void*, BrtErrorBuffer*) {
  const int64_t n = static_cast<int64_t>(reinterpret_cast<intptr_t>(state));
  const float* in = static_cast<const float*>(buffers[0]);
  float* out = static_cast<float*>(buffers[1]);
  for (int64_t i = 0; i < n; ++i) out[i] = -in[i];
  return BRT_OK;
}

int32_t Resolve(const BrtOpSignature* sig, BrtKernel* kernel, BrtErrorBuffer* error) {
  if (std::strcmp(sig->kind, "negate") != 0 || sig->result_dtypes[0] != BRT_DTYPE_F32) {
    std::snprintf(error->message, sizeof(error->message), "only f32 negate");
    return BRT_ERROR_UNSUPPORTED;
  }
  *kernel = BrtKernel{
      offsetof(BrtKernel, flags), nullptr, &Prepare, &ReleaseState, nullptr, nullptr, &Run, 0};
  return BRT_OK;
}

int32_t KernelCount() { return 1; }

int32_t KernelInfo(int32_t index, BrtKernelInfo* info) {
  if (index != 0) return BRT_ERROR_INVALID_ARGUMENT;
  *info = BrtKernelInfo{"negate", BRT_DEVICE_CPU, "f32"};
  return BRT_OK;
}

void* Allocate(int32_t, size_t bytes, size_t alignment) {
  return std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment);
}

void Deallocate(int32_t, void* p) { std::free(p); }

}  // namespace

extern "C" __attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get(
    uint32_t version) {
  if (version != BRT_PROVIDER_ABI_VERSION) return nullptr;
  static BrtProviderApi api = [] {
    BrtProviderApi a{};
    a.struct_size = offsetof(BrtProviderApi, kernel_info) + sizeof(a.kernel_info);
    a.abi_version = BRT_PROVIDER_ABI_VERSION;
    a.name = "older";
    a.device_kind = BRT_DEVICE_CPU;
    a.device_count = &DeviceCount;
    a.allocate = &Allocate;
    a.deallocate = &Deallocate;
    a.resolve_kernel = &Resolve;
    a.kernel_count = &KernelCount;
    a.kernel_info = &KernelInfo;
    // Whatever lies past struct_size must not be read: poison it.
    std::memset(reinterpret_cast<char*>(&a) + a.struct_size, 0xA5, sizeof(a) - a.struct_size);
    return a;
  }();
  return &api;
}

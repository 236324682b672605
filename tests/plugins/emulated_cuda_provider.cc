// A CUDA-kind provider that runs the CUDA provider's own kernels
// (own_kernels.cc over kernels.cu) on the host: device memory is host
// memory, a queue runs its work at once, and blocks run one after another
// (emulation.h). The op tests run through it with BRT_TEST_DEVICE=cuda, so
// the CUDA provider's plans, parameters and kernel bodies are checked against
// the same references on machines without a GPU. Library-backed kernels
// (cuBLASLt matmul, cuDNN convolution) and PTX are not emulated.
#include <cstdlib>
#include <cstring>

#include "cuda/runtime.h"

namespace brt::cuda {

void* DeviceAlloc(size_t bytes) { return std::malloc(bytes ? bytes : 1); }
void DeviceFree(void* p) { std::free(p); }
void UploadSync(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CopyAsync(void* dst, const void* src, size_t bytes, cudaStream_t) {
  if (bytes && dst != src) std::memmove(dst, src, bytes);
}
void ZeroAsync(void* dst, size_t bytes, cudaStream_t) {
  if (bytes) std::memset(dst, 0, bytes);
}

namespace {

const std::vector<TableRow>& Rows() {
  static const std::vector<TableRow> rows = OwnKernelRows();
  return rows;
}

int32_t Prepare(const void* data, const BrtOpDesc* op, void** state, BrtErrorBuffer* e) {
  const auto* row = static_cast<const TableRow*>(data);
  return Guard(e, [&] { *state = static_cast<Runnable*>(row->make(ops::OpInfo(*op))); });
}

int32_t DeviceCount() { return 1; }

void* Allocate(int32_t, size_t bytes, size_t alignment) {
  const size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded ? rounded : alignment);
}

void Deallocate(int32_t, void* p) { std::free(p); }

int32_t Copy(int32_t, void* dst, const void* src, size_t bytes, int32_t, void*, BrtErrorBuffer*) {
  if (bytes) std::memcpy(dst, src, bytes);
  return BRT_OK;
}

int32_t CreateQueue(int32_t, void** queue, BrtErrorBuffer*) {
  *queue = new Queue;
  return BRT_OK;
}

void DestroyQueue(void* queue) { delete static_cast<Queue*>(queue); }

int32_t SynchronizeQueue(void*, BrtErrorBuffer*) { return BRT_OK; }

int32_t ResolveKernel(const BrtOpSignature* sig, BrtKernel* kernel, BrtErrorBuffer* e) {
  return ResolveFrom(Rows(), Prepare, sig, kernel, e);
}

int32_t KernelCount() { return static_cast<int32_t>(Rows().size()); }

int32_t KernelInfo(int32_t i, BrtKernelInfo* info) { return KernelInfoFrom(Rows(), i, info); }

}  // namespace
}  // namespace brt::cuda

extern "C" __attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get(
    uint32_t core_abi_version) {
  using namespace brt::cuda;
  if (core_abi_version != BRT_PROVIDER_ABI_VERSION) return nullptr;
  static const BrtProviderApi api = [] {
    BrtProviderApi a{};
    a.struct_size = sizeof(BrtProviderApi);
    a.abi_version = BRT_PROVIDER_ABI_VERSION;
    a.name = "cuda";
    a.device_kind = BRT_DEVICE_CUDA;
    a.device_count = DeviceCount;
    a.allocate = Allocate;
    a.deallocate = Deallocate;
    a.copy = Copy;
    a.create_queue = CreateQueue;
    a.destroy_queue = DestroyQueue;
    a.synchronize_queue = SynchronizeQueue;
    a.resolve_kernel = ResolveKernel;
    a.kernel_count = KernelCount;
    a.kernel_info = KernelInfo;
    return a;
  }();
  return &api;
}

// The CUDA provider (docs/writing-a-provider.md, README "GPU"): devices through their primary
// contexts, device memory from CUDA's stream-ordered pools, one stream per
// request context (or the caller's), CUDA graphs, events, pinned staging, and
// the kernel table: brt's own kernels (own_kernels.cc over kernels_*.cu),
// cuBLASLt and cuDNN (library_kernels.cc), cuFFT (fft_kernel.cc), and
// generated kernels from the executable's PTX (generated_kernel.cc). Only the
// plugin ABI crosses this boundary; no exception escapes it.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "brt/provider_abi.h"
#include "kernels.h"
#include "library_plans.h"
#include "runtime.h"

namespace brt::cuda {

void* DeviceAlloc(size_t bytes) {
  void* p = nullptr;
  Check(cudaMalloc(&p, bytes ? bytes : 1), "allocating device memory for a kernel");
  return p;
}
void DeviceFree(void* p) { cudaFree(p); }
void UploadSync(void* dst, const void* src, size_t bytes) {
  Check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "uploading to the device");
}
void CopyAsync(void* dst, const void* src, size_t bytes, cudaStream_t stream) {
  Check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream), "copy");
}
void UseDevice(int ordinal) { Check(cudaSetDevice(ordinal), "cudaSetDevice"); }
void ZeroAsync(void* dst, size_t bytes, cudaStream_t stream) {
  Check(cudaMemsetAsync(dst, 0, bytes, stream), "zeroing device memory");
}

namespace {

// --- devices and memory -------------------------------------------------------

// Per device: a stream-ordered pool of the provider's own (cached memory is
// kept up to the release threshold, BRT_CUDA_POOL_RELEASE_BYTES, default: all
// of it; CUDA's default pool, which other libraries in the process share, is
// left as it is) and a stream for allocations, so memory is ready for any
// stream when returned.
struct DeviceState {
  cudaMemPool_t pool = nullptr;
  cudaStream_t alloc_stream = nullptr;
};

std::mutex devices_mu;
std::vector<DeviceState> devices;

DeviceState& Device(int ordinal) {
  std::lock_guard<std::mutex> lock(devices_mu);
  int count = 0;
  if (devices.empty() && cudaGetDeviceCount(&count) == cudaSuccess) devices.resize(count);
  if (ordinal < 0 || ordinal >= static_cast<int>(devices.size()))
    throw Error(BRT_ERROR_INVALID_ARGUMENT, "CUDA device " + std::to_string(ordinal) +
                                                " does not exist (" +
                                                std::to_string(devices.size()) + " visible)");
  DeviceState& d = devices[ordinal];
  if (!d.pool) {
    UseDevice(ordinal);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = ordinal;
    Check(cudaMemPoolCreate(&d.pool, &props), "cudaMemPoolCreate");
    uint64_t threshold = UINT64_MAX;
    if (const char* env = std::getenv("BRT_CUDA_POOL_RELEASE_BYTES"))
      threshold = std::strtoull(env, nullptr, 10);
    Check(cudaMemPoolSetAttribute(d.pool, cudaMemPoolAttrReleaseThreshold, &threshold),
          "setting the pool release threshold");
    Check(cudaStreamCreateWithFlags(&d.alloc_stream, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  return d;
}

int32_t DeviceCount() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

void* Allocate(int32_t ordinal, size_t bytes, size_t) {
  void* p = nullptr;
  try {
    DeviceState& d = Device(ordinal);
    UseDevice(ordinal);
    // Pool blocks are at least 256-byte aligned, as the core asks.
    Check(cudaMallocFromPoolAsync(&p, bytes ? bytes : 1, d.pool, d.alloc_stream),
          "cudaMallocFromPoolAsync");
    Check(cudaStreamSynchronize(d.alloc_stream), "cudaStreamSynchronize");
  } catch (const Error& e) {
    std::fprintf(stderr, "brt cuda: %s\n", e.what());
    return nullptr;
  }
  return p;
}

void Deallocate(int32_t ordinal, void* p) {
  try {
    DeviceState& d = Device(ordinal);
    UseDevice(ordinal);
    Check(cudaFreeAsync(p, d.alloc_stream), "cudaFreeAsync");
  } catch (const Error& e) {
    std::fprintf(stderr, "brt cuda: %s\n", e.what());
  }
}

void Trim(int32_t ordinal) {
  try {
    DeviceState& d = Device(ordinal);
    UseDevice(ordinal);
    Check(cudaStreamSynchronize(d.alloc_stream), "cudaStreamSynchronize");
    Check(cudaMemPoolTrimTo(d.pool, 0), "cudaMemPoolTrimTo");
  } catch (const Error& e) {
    std::fprintf(stderr, "brt cuda: %s\n", e.what());
  }
}

uint64_t ReservedBytes(int32_t ordinal) {
  uint64_t v = 0;
  try {
    Check(cudaMemPoolGetAttribute(Device(ordinal).pool, cudaMemPoolAttrReservedMemCurrent, &v),
          "reading the pool's reserved bytes");
  } catch (const Error&) {
  }
  return v;
}

// --- queues -------------------------------------------------------------------

// A queue over the caller's stream when `wrap` (0, the default stream,
// included), else over a new non-blocking stream of its own.
Queue* MakeQueue(int32_t ordinal, bool wrap, cudaStream_t native) {
  DeviceState& d = Device(ordinal);
  auto* q = new Queue;
  q->device = ordinal;
  try {
    UseDevice(ordinal);
    if (wrap) {
      q->stream = native, q->owned = false;
    } else {
      Check(cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    }
    Check(cublasLtCreate(&q->lt), "cublasLtCreate");
    Check(cudaMallocFromPoolAsync(&q->workspace, kMatmulWorkspace, d.pool, q->stream),
          "matmul workspace");
  } catch (...) {
    if (q->owned && q->stream) cudaStreamDestroy(q->stream);
    delete q;
    throw;
  }
  return q;
}

int32_t CreateQueue(int32_t ordinal, void** queue, BrtErrorBuffer* e) {
  return Guard(e, [&] { *queue = MakeQueue(ordinal, /*wrap=*/false, nullptr); });
}

int32_t WrapQueue(int32_t ordinal, void* native, void** queue, BrtErrorBuffer* e) {
  return Guard(
      e, [&] { *queue = MakeQueue(ordinal, /*wrap=*/true, static_cast<cudaStream_t>(native)); });
}

void DestroyQueue(void* queue) {
  auto* q = static_cast<Queue*>(queue);
  if (!q) return;
  cudaSetDevice(q->device);
  cudaFreeAsync(q->workspace, q->stream);
  cudaStreamSynchronize(q->stream);
  cublasLtDestroy(q->lt);
  if (q->owned) cudaStreamDestroy(q->stream);
  delete q;
}

int32_t SynchronizeQueue(void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    UseDevice(static_cast<Queue*>(queue)->device);
    Check(cudaStreamSynchronize(static_cast<Queue*>(queue)->stream), "running the queued work");
  });
}

int32_t Copy(int32_t ordinal, void* dst, const void* src, size_t bytes, int32_t direction,
             void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    UseDevice(ordinal);
    const cudaMemcpyKind kind = direction == 0   ? cudaMemcpyHostToDevice
                                : direction == 1 ? cudaMemcpyDeviceToHost
                                                 : cudaMemcpyDeviceToDevice;
    if (queue)
      Check(cudaMemcpyAsync(dst, src, bytes, kind, static_cast<Queue*>(queue)->stream),
            "cudaMemcpyAsync");
    else
      Check(cudaMemcpy(dst, src, bytes, kind), "cudaMemcpy");
  });
}

// --- graphs -------------------------------------------------------------------

int32_t BeginCapture(void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    // CUDA refuses to capture the legacy default stream (handle 0, PyTorch's
    // default stream): refused here without asking it.
    const cudaStream_t stream = static_cast<Queue*>(queue)->stream;
    if (stream == nullptr || stream == cudaStreamLegacy)
      throw Error(BRT_ERROR_UNSUPPORTED,
                  "the legacy default stream (handle 0) cannot be recorded into a CUDA graph; "
                  "set a stream of your own (e.g. torch.cuda.Stream()) to replay graphs");
    UseDevice(static_cast<Queue*>(queue)->device);
    Check(cudaStreamBeginCapture(static_cast<Queue*>(queue)->stream,
                                 cudaStreamCaptureModeThreadLocal),
          "cudaStreamBeginCapture");
  });
}

int32_t EndCapture(void* queue, void** graph, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    cudaGraph_t g = nullptr;
    Check(cudaStreamEndCapture(static_cast<Queue*>(queue)->stream, &g), "cudaStreamEndCapture");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t made = cudaGraphInstantiate(&exec, g, 0);
    cudaGraphDestroy(g);
    Check(made, "cudaGraphInstantiate");
    *graph = exec;
  });
}

int32_t LaunchGraph(void* graph, void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    UseDevice(static_cast<Queue*>(queue)->device);
    Check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), static_cast<Queue*>(queue)->stream),
          "cudaGraphLaunch");
  });
}

void DestroyGraph(void* graph) { cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph)); }

// --- events and pinned host memory --------------------------------------------

int32_t CreateEvent(int32_t ordinal, void** event, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    UseDevice(ordinal);
    cudaEvent_t ev = nullptr;
    Check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    *event = ev;
  });
}

void DestroyEvent(void* event) { cudaEventDestroy(static_cast<cudaEvent_t>(event)); }

int32_t RecordEvent(void* event, void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    UseDevice(static_cast<Queue*>(queue)->device);
    Check(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<Queue*>(queue)->stream),
          "cudaEventRecord");
  });
}

int32_t WaitEvent(void* queue, void* event, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    UseDevice(static_cast<Queue*>(queue)->device);
    Check(
        cudaStreamWaitEvent(static_cast<Queue*>(queue)->stream, static_cast<cudaEvent_t>(event), 0),
        "cudaStreamWaitEvent");
  });
}

void* AllocateHost(size_t bytes) {
  void* p = nullptr;
  return cudaMallocHost(&p, bytes ? bytes : 1) == cudaSuccess ? p : nullptr;
}

void FreeHost(void* p) { cudaFreeHost(p); }

// --- the kernel table -----------------------------------------------------------

const std::vector<TableRow>& Rows() {
  static const std::vector<TableRow> rows = KernelRows(&MakeMatmul, &MakeConvolution, &MakeFft);
  return rows;
}

int32_t PrepareKernel(const void* data, const BrtOpDesc* op, void** state, BrtErrorBuffer* e) {
  const auto* row = static_cast<const TableRow*>(data);
  return Guard(e, [&] {
    // Ops carry no device ordinal in the executable: kernels are prepared
    // (modules loaded, buffers allocated) on device 0, where they run.
    UseDevice(0);
    const bool generated =
        row->may_be_generated && BRT_STRUCT_HAS(BrtOpDesc, op, kernel_image) && op->kernel_image;
    if (generated)
      *state = static_cast<Runnable*>(MakeGeneratedKernel(op));
    else
      *state = static_cast<Runnable*>(row->make(OpInfo(*op)));
  });
}

const ops::KernelTable<TableRow> kTable = {&Rows, EntryPoints(PrepareKernel), BRT_DEVICE_CUDA,
                                           "CUDA"};

BrtProviderApi MakeApi() {
  BrtProviderApi a = ops::ProviderApiHeader("cuda", BRT_DEVICE_CUDA);
  BRT_SET_ENTRIES(a, BRT_MEMORY_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_QUEUE_ENTRIES);
  ops::SetKernelTable<kTable>(a);
  a.wrap_queue = WrapQueue;
  a.trim = Trim;
  a.reserved_bytes = ReservedBytes;
  BRT_SET_ENTRIES(a, BRT_GRAPH_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_EVENT_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_PINNED_HOST_ENTRIES);
  return a;
}

}  // namespace
}  // namespace brt::cuda

BRT_DEFINE_PROVIDER_ENTRY_POINT(brt::cuda::MakeApi)

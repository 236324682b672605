// The CUDA provider (docs/writing-a-provider.md, README "GPU"): devices through their primary
// contexts, device memory from CUDA's stream-ordered pools, one stream per
// request context (or the caller's), CUDA graphs, and kernels: dot_general and
// brt.matmul through cuBLASLt, elementwise ops with broadcasting (kernels.cu),
// generated kernels (brt.fused_elementwise, row reductions) loaded from the
// executable's PTX with cuModuleLoadData, brt.copy, reshape and constant.
// Only the plugin ABI crosses this boundary; no exception escapes it.
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

using cuda::Check;  // the runtime's overload, next to the driver's and cuBLASLt's

// The driver API that generated kernels need, through the runtime's entry
// points: the plugin does not link libcuda, so it loads where no driver is
// installed and reports no devices there.
struct DriverApi {
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  bool complete() const {
    return get_error_string && module_load_data && module_get_function && module_unload &&
           launch_kernel;
  }
};

const DriverApi& Driver() {
  static const DriverApi api = [] {
    DriverApi a;
    auto get = [](const char* name, auto* fn) {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult found{};
      if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) ==
              cudaSuccess &&
          found == cudaDriverEntryPointSuccess)
        *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(p);
    };
    get("cuGetErrorString", &a.get_error_string);
    get("cuModuleLoadData", &a.module_load_data);
    get("cuModuleGetFunction", &a.module_get_function);
    get("cuModuleUnload", &a.module_unload);
    get("cuLaunchKernel", &a.launch_kernel);
    return a;
  }();
  return api;
}

void Check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    if (Driver().get_error_string) Driver().get_error_string(r, &s);
    throw Error(BRT_ERROR_INTERNAL, std::string(what) + ": " + (s ? s : "CUDA driver error"));
  }
}
void Check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(BRT_ERROR_INTERNAL, std::string(what) + ": cuBLASLt status " + std::to_string(s));
}

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

// --- kernels ------------------------------------------------------------------

// A generated kernel from the executable: the module is loaded once per
// prepared op (once per Session for static shapes) and launched with the op's
// buffers as its parameters, in order.
class GeneratedKernel final : public Kernel {
 public:
  explicit GeneratedKernel(const BrtOpDesc* op) {
    if (std::strncmp(op->kernel_target, "ptx:", 4))
      throw Error(BRT_ERROR_UNSUPPORTED, std::string("kernel '") + op->kernel_name + "' targets '" +
                                             op->kernel_target + "', not PTX");
    // cuModuleLoadData wants NUL-terminated PTX text.
    std::string ptx(reinterpret_cast<const char*>(op->kernel_image), op->kernel_image_size);
    if (!Driver().complete())
      throw Error(BRT_ERROR_UNSUPPORTED,
                  "generated kernels need the CUDA driver API, which this driver does not offer");
    Check(cudaFree(nullptr), "creating the primary context");  // makes it current
    Check(Driver().module_load_data(&module_, ptx.c_str()), "cuModuleLoadData");
    Check(Driver().module_get_function(&function_, module_, op->kernel_name),
          "cuModuleGetFunction");
    const ops::GeneratedLaunch launch = ops::PlanGeneratedLaunch(OpInfo(*op));
    block_ = launch.block, grid_ = launch.grid;
    num_buffers_ = op->num_operands + op->num_results;
    if (num_buffers_ > kMaxBuffers)
      throw Error(BRT_ERROR_UNSUPPORTED, std::string("kernel '") + op->kernel_name + "' takes " +
                                             std::to_string(num_buffers_) + " buffers; at most " +
                                             std::to_string(kMaxBuffers) + " are supported");
  }
  ~GeneratedKernel() override {
    if (module_) Driver().module_unload(module_);
  }
  void Run(void* const* b, Queue* q) override {
    // The kernel's parameters are the buffer pointers, in order. Local: the
    // state is shared by concurrent request contexts.
    void* params[kMaxBuffers];
    for (int i = 0; i < num_buffers_; ++i) params[i] = const_cast<void**>(&b[i]);
    Check(
        Driver().launch_kernel(function_, grid_, 1, 1, block_, 1, 1, 0, q->stream, params, nullptr),
        "cuLaunchKernel");
  }

 private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  static constexpr int kMaxBuffers = 32;
  unsigned block_ = 256, grid_ = 1;
  int num_buffers_ = 0;
};

cudaDataType_t CudaType(int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return CUDA_R_32F;
    case BRT_DTYPE_F16:
      return CUDA_R_16F;
    case BRT_DTYPE_BF16:
      return CUDA_R_16BF;
  }
  throw Error(BRT_ERROR_UNSUPPORTED, "cuBLASLt path takes f32, f16 and bf16");
}

// dot_general / brt.matmul through cuBLASLt (GemmPlan, library_plans.h):
// packed operands are copied into per-context scratch first; bias and relu
// use the epilogue, tanh and exact GELU run after it.
class MatmulKernel final : public Kernel {
 public:
  MatmulKernel(const OpInfo& op, const GemmPlan& g) : g_(g) {
    const ops::Activation activation = g_.activation;
    compute_ = CUBLAS_COMPUTE_32F;
    if (g_.dtype == BRT_DTYPE_F32 && std::getenv("BRT_CUDA_ALLOW_TF32"))
      compute_ = CUBLAS_COMPUTE_32F_FAST_TF32;
    const bool relu = activation == ops::Activation::kRelu;
    if (g_.bias)
      epilogue_ = relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    else if (relu)
      epilogue_ = CUBLASLT_EPILOGUE_RELU;
    post_ = !relu && activation != ops::Activation::kNone;
    const cudaDataType_t t = CudaType(g_.dtype);
    auto layout = [&](cublasLtMatrixLayout_t* m, int64_t rows, int64_t cols, int64_t ld,
                      int64_t stride) {
      Check(cublasLtMatrixLayoutCreate(m, t, rows, cols, ld), "cublasLtMatrixLayoutCreate");
      const int32_t count = static_cast<int32_t>(g_.batch);
      Check(cublasLtMatrixLayoutSetAttribute(*m, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof(count)),
            "BATCH_COUNT");
      Check(cublasLtMatrixLayoutSetAttribute(*m, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof(stride)),
            "BATCH_OFFSET");
    };
    layout(&a_, g_.a_rows, g_.a_cols, g_.lda, g_.stride_a);
    layout(&b_, g_.b_rows, g_.b_cols, g_.ldb, g_.stride_b);
    layout(&c_, g_.m, g_.n, g_.ldc, g_.stride_c);
    // Two algorithms: one for operands aligned as the core's arenas are
    // (256 B), one for any element-aligned pointer (a caller's tensor bound
    // at an offset); Run picks by the real addresses.
    const uint32_t element = static_cast<uint32_t>(brt_dtype_size(g_.dtype));
    aligned_ = FindAlgorithm(kAlignedBytes, &algo_aligned_);
    unaligned_ = FindAlgorithm(element, &algo_unaligned_);
    if (!aligned_ && !unaligned_)
      throw Error(BRT_ERROR_UNSUPPORTED, op.kind + ": cuBLASLt has no algorithm for " +
                                             std::to_string(g_.m) + "x" + std::to_string(g_.n) +
                                             "x" + std::to_string(g_.k));
    if (!unaligned_) fallback_.reset(MakeOwnDot(op));
    if (post_) {
      post_params_.kind = Elementwise::kActivation;
      post_params_.op = static_cast<int>(activation);
      post_params_.space.n = post_params_.space.dims[0] = g_.batch * g_.m * g_.n;
      post_params_.space.strides[0][0] = 1;
    }
  }
  ~MatmulKernel() override {
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(c_);
  }
  Runnable* NewInstance() const override { return new Instance(*this); }
  void Run(void* const*, Queue*) override {}  // runs through its per-context instance

 private:
  static constexpr uint32_t kAlignedBytes = 256;

  // The best algorithm for operands aligned to `alignment` bytes, if any.
  bool FindAlgorithm(uint32_t alignment, cublasLtMatmulHeuristicResult_t* algo) const {
    cublasLtMatmulDesc_t desc = NewDesc();
    cublasLtHandle_t handle = nullptr;
    cublasLtMatmulPreference_t pref = nullptr;
    const uint64_t ws = kMatmulWorkspace;
    int found = 0;
    cublasStatus_t s = cublasLtCreate(&handle);
    if (s == CUBLAS_STATUS_SUCCESS) s = cublasLtMatmulPreferenceCreate(&pref);
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                               sizeof(ws));
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(pref, attr, &alignment, sizeof(alignment));
    if (s == CUBLAS_STATUS_SUCCESS)
      s = cublasLtMatmulAlgoGetHeuristic(handle, desc, a_, b_, c_, c_, pref, 1, algo, &found);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (handle) cublasLtDestroy(handle);
    cublasLtMatmulDescDestroy(desc);
    return s == CUBLAS_STATUS_SUCCESS && found > 0;
  }

  cublasLtMatmulDesc_t NewDesc() const {
    cublasLtMatmulDesc_t desc = nullptr;
    Check(cublasLtMatmulDescCreate(&desc, compute_, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t ta = g_.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = g_.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    Check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
          "TRANSA");
    Check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
          "TRANSB");
    Check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue_,
                                         sizeof(epilogue_)),
          "EPILOGUE");
    return desc;
  }

  // Per context: its own descriptor (the bias pointer is set per run) and
  // scratch for packed operands.
  class Instance final : public Runnable {
   public:
    explicit Instance(const MatmulKernel& k)
        : k_(k), desc_(k.NewDesc()), lhs_(k.g_.lhs.packed_bytes), rhs_(k.g_.rhs.packed_bytes) {}
    ~Instance() override { cublasLtMatmulDescDestroy(desc_); }
    void Run(void* const* b, Queue* q) override {
      const GemmPlan& g = k_.g_;
      const size_t es = brt_dtype_size(g.dtype);
      const void* lhs = b[0];
      const void* rhs = b[1];
      if (g.lhs.packed_bytes) {
        Check(LaunchStridedCopy(g.lhs.pack, es, b[0], lhs_.get(), q->stream), "packing lhs");
        lhs = lhs_.get();
      }
      if (g.rhs.packed_bytes) {
        Check(LaunchStridedCopy(g.rhs.pack, es, b[1], rhs_.get(), q->stream), "packing rhs");
        rhs = rhs_.get();
      }
      if (g.bias)
        Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b[2],
                                             sizeof(void*)),
              "BIAS_POINTER");
      void* out = b[g.result];
      const uintptr_t addresses =
          reinterpret_cast<uintptr_t>(lhs) | reinterpret_cast<uintptr_t>(rhs) |
          reinterpret_cast<uintptr_t>(out) | (g.bias ? reinterpret_cast<uintptr_t>(b[2]) : 0);
      const bool aligned = k_.aligned_ && addresses % kAlignedBytes == 0;
      if (!aligned && !k_.unaligned_) return k_.fallback_->Run(b, q);
      const float one = 1.f, zero = 0.f;
      const cublasLtMatmulAlgo_t* algo =
          aligned ? &k_.algo_aligned_.algo : &k_.algo_unaligned_.algo;
      Check(cublasLtMatmul(q->lt, desc_, &one, rhs, k_.a_, lhs, k_.b_, &zero, out, k_.c_, out,
                           k_.c_, algo, q->workspace, kMatmulWorkspace, q->stream),
            "cublasLtMatmul");
      if (k_.post_) {
        const void* in[] = {out};
        Check(LaunchElementwise(k_.post_params_, g.dtype, g.dtype, in, out, q->stream),
              "matmul activation");
      }
    }

   private:
    const MatmulKernel& k_;
    cublasLtMatmulDesc_t desc_;
    DeviceBuffer lhs_, rhs_;
  };

  GemmPlan g_;
  cublasComputeType_t compute_ = CUBLAS_COMPUTE_32F;
  cublasLtEpilogue_t epilogue_ = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_aligned_{}, algo_unaligned_{};
  bool aligned_ = false, unaligned_ = false;
  std::unique_ptr<Kernel> fallback_;  // brt's own kernel, where no unaligned algorithm exists
  bool post_ = false;                 // tanh and gelu run after cuBLASLt
  ElementwiseParams post_params_;
};

// convolution / brt.conv through cuDNN (ConvLaunchPlan, library_plans.h).
class ConvKernel final : public Kernel {
 public:
  explicit ConvKernel(const OpInfo& op) : c_(PlanConvLaunch(op)) {
    const ops::ConvPlan& p = c_.conv;
    if (p.empty_result || p.empty_contraction) return;
    const cudnnDataType_t t = c_.dtype == BRT_DTYPE_F16    ? CUDNN_DATA_HALF
                              : c_.dtype == BRT_DTYPE_BF16 ? CUDNN_DATA_BFLOAT16
                                                           : CUDNN_DATA_FLOAT;
    // cuDNN's Nd API takes int dims, strides and windows, and 4 to 8 dims:
    // what does not fit is refused by name, never narrowed.
    auto ints = [&](const std::vector<int64_t>& v, const char* what) {
      std::vector<int> out;
      for (int64_t x : v) {
        if (x < INT32_MIN || x > INT32_MAX)
          throw Error(BRT_ERROR_UNSUPPORTED,
                      op.kind + ": the convolution's " + what + " (" + std::to_string(x) +
                          ") does not fit cuDNN's 32-bit descriptors; split the batch or the "
                          "image");
        out.push_back(static_cast<int>(x));
      }
      return out;
    };
    const int n = static_cast<int>(c_.x_dims.size());
    if (n < 4 || n > CUDNN_DIM_MAX)
      throw Error(BRT_ERROR_UNSUPPORTED,
                  op.kind + ": cuDNN takes 4 to " + std::to_string(CUDNN_DIM_MAX) +
                      "-dimensional convolutions, this one has " + std::to_string(n) + " dims");
    CheckDnn(cudnnCreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
    CheckDnn(cudnnCreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor");
    CheckDnn(cudnnCreateFilterDescriptor(&w_), "cudnnCreateFilterDescriptor");
    CheckDnn(cudnnCreateConvolutionDescriptor(&conv_), "cudnnCreateConvolutionDescriptor");
    CheckDnn(cudnnSetTensorNdDescriptor(x_, t, n, ints(c_.x_dims, "input shape").data(),
                                        ints(c_.x_strides, "input strides").data()),
             "input descriptor");
    CheckDnn(cudnnSetTensorNdDescriptor(y_, t, n, ints(c_.y_dims, "result shape").data(),
                                        ints(c_.y_strides, "result strides").data()),
             "result descriptor");
    CheckDnn(cudnnSetFilterNdDescriptor(w_, t, CUDNN_TENSOR_NCHW, n,
                                        ints(c_.w_dims, "filter shape").data()),
             "filter descriptor");
    CheckDnn(cudnnSetConvolutionNdDescriptor(conv_, n - 2, ints(c_.pads, "padding").data(),
                                             ints(c_.strides, "window strides").data(),
                                             ints(c_.dilations, "dilations").data(),
                                             CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
             "convolution descriptor");
    CheckDnn(cudnnSetConvolutionGroupCount(conv_, static_cast<int>(p.groups)), "group count");
    // f32 keeps full precision; 16-bit types may use tensor cores.
    CheckDnn(cudnnSetConvolutionMathType(
                 conv_, c_.dtype == BRT_DTYPE_F32 ? CUDNN_FMA_MATH : CUDNN_TENSOR_OP_MATH),
             "math type");
    cudnnHandle_t handle = nullptr;
    CheckDnn(cudnnCreate(&handle), "cudnnCreate");
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int found = 0;
    const cudnnStatus_t st =
        cudnnGetConvolutionForwardAlgorithm_v7(handle, x_, w_, conv_, y_, 8, &found, perf);
    bool chosen = false;
    for (int k = 0; st == CUDNN_STATUS_SUCCESS && k < found && !chosen; ++k)
      if (perf[k].status == CUDNN_STATUS_SUCCESS && perf[k].memory <= kMatmulWorkspace)
        algo_ = perf[k].algo, workspace_ = perf[k].memory, chosen = true;
    cudnnDestroy(handle);
    if (!chosen)
      throw Error(BRT_ERROR_UNSUPPORTED, op.kind + ": cuDNN has no algorithm for this convolution");
  }
  ~ConvKernel() override {
    if (x_) cudnnDestroyTensorDescriptor(x_);
    if (y_) cudnnDestroyTensorDescriptor(y_);
    if (w_) cudnnDestroyFilterDescriptor(w_);
    if (conv_) cudnnDestroyConvolutionDescriptor(conv_);
  }
  Runnable* NewInstance() const override { return new Instance(*this); }
  void Run(void* const*, Queue*) override {}  // runs through its per-context instance

 private:
  static void CheckDnn(cudnnStatus_t s, const char* what) {
    if (s != CUDNN_STATUS_SUCCESS)
      throw Error(BRT_ERROR_INTERNAL, std::string(what) + ": " + cudnnGetErrorString(s));
  }
  // Per context: a cuDNN handle (bound to the queue's stream at run) and scratch.
  class Instance final : public Runnable {
   public:
    explicit Instance(const ConvKernel& k)
        : k_(k), workspace_(k.workspace_), weights_(k.c_.weight_bytes), input_(k.c_.input_bytes) {
      CheckDnn(cudnnCreate(&handle_), "cudnnCreate");
    }
    ~Instance() override { cudnnDestroy(handle_); }
    void Run(void* const* b, Queue* q) override { k_.Launch(b, q, *this); }

   private:
    friend class ConvKernel;
    const ConvKernel& k_;
    cudnnHandle_t handle_ = nullptr;
    DeviceBuffer workspace_, weights_, input_;
  };
  void Launch(void* const* b, Queue* q, Instance& in) const {
    const ops::ConvPlan& p = c_.conv;
    void* out = b[c_.result];
    if (p.empty_result) return;
    if (p.empty_contraction) {
      ZeroAsync(out, c_.out_bytes, q->stream);
      return;
    }
    const size_t es = brt_dtype_size(c_.dtype);
    const void* w = b[1];
    if (c_.weight_bytes) {
      Check(LaunchStridedCopy(c_.weight_copy, es, b[1], in.weights_.get(), q->stream),
            "filter copy");
      w = in.weights_.get();
    }
    const void* x = b[0];
    if (c_.input_bytes) {
      ZeroAsync(in.input_.get(), c_.input_bytes, q->stream);
      Check(LaunchStridedCopy(c_.input_copy, es, b[0],
                              static_cast<char*>(in.input_.get()) + c_.input_offset, q->stream),
            "padded input");
      x = in.input_.get();
    }
    CheckDnn(cudnnSetStream(in.handle_, q->stream), "cudnnSetStream");
    const float one = 1.f, zero = 0.f;
    CheckDnn(cudnnConvolutionForward(in.handle_, &one, x_, x, w_, w, conv_, algo_,
                                     in.workspace_.get(), workspace_, &zero, y_, out),
             "cudnnConvolutionForward");
    if (p.has_bias) {
      const void* operands[] = {out, b[2]};
      Check(LaunchElementwise(c_.bias, c_.dtype, c_.dtype, operands, out, q->stream), "conv bias");
    }
    if (p.activation != ops::Activation::kNone) {
      const void* operands[] = {out};
      Check(LaunchElementwise(c_.activation, c_.dtype, c_.dtype, operands, out, q->stream),
            "conv activation");
    }
  }

  ConvLaunchPlan c_;
  size_t workspace_ = 0;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
};

// --- the kernel table -----------------------------------------------------------

// cuBLASLt for f32, f16 and bf16, brt's own kernel for other dtypes, for
// empty operands (a zero M, N or K never reaches the library) and where
// cuBLASLt refuses the layout or has no algorithm; that last case is said
// once per process, naming why.
Kernel* MakeMatmul(const OpInfo& op) {
  if (!GemmSupports(op.out[0].dtype)) return MakeOwnDot(op);
  const GemmPlan plan = PlanGemm(op);
  if (plan.m == 0 || plan.n == 0 || plan.k == 0 || plan.batch == 0) return MakeOwnDot(op);
  try {
    return new MatmulKernel(op, plan);
  } catch (const Error& x) {
    static std::once_flag said;
    std::call_once(said, [&] {
      std::fprintf(stderr,
                   "brt cuda: %s: cuBLASLt cannot run it (%s); brt's own matmul kernel runs such "
                   "ops instead (said once)\n",
                   op.kind.c_str(), x.what());
    });
  }
  return MakeOwnDot(op);
}

const std::vector<TableRow>& Rows() {
  static const std::vector<TableRow> rows = KernelRows(&MakeMatmul, &Make<ConvKernel>);
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
      *state = static_cast<Runnable*>(new GeneratedKernel(op));
    else
      *state = static_cast<Runnable*>(row->make(OpInfo(*op)));
  });
}

const ops::KernelTable<TableRow> kTable = {&Rows, EntryPoints(PrepareKernel), BRT_DEVICE_CUDA,
                                           "CUDA"};

}  // namespace
}  // namespace brt::cuda

extern "C" __attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get(
    uint32_t core_abi_version) {
  using namespace brt::cuda;
  if (core_abi_version != BRT_PROVIDER_ABI_VERSION) return nullptr;
  static const BrtProviderApi api = [] {
    BrtProviderApi a = brt::ops::ProviderApiHeader("cuda", BRT_DEVICE_CUDA);
    a.device_count = DeviceCount;
    a.allocate = Allocate;
    a.deallocate = Deallocate;
    a.copy = Copy;
    a.create_queue = CreateQueue;
    a.destroy_queue = DestroyQueue;
    a.synchronize_queue = SynchronizeQueue;
    brt::ops::SetKernelTable<kTable>(a);
    a.wrap_queue = WrapQueue;
    a.trim = Trim;
    a.reserved_bytes = ReservedBytes;
    a.begin_capture = BeginCapture;
    a.end_capture = EndCapture;
    a.launch_graph = LaunchGraph;
    a.destroy_graph = DestroyGraph;
    a.create_event = CreateEvent;
    a.destroy_event = DestroyEvent;
    a.record_event = RecordEvent;
    a.wait_event = WaitEvent;
    a.allocate_host = AllocateHost;
    a.free_host = FreeHost;
    return a;
  }();
  return &api;
}

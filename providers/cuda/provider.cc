// The CUDA provider (DESIGN.md §4-6): devices through their primary
// contexts, device memory from CUDA's stream-ordered pools, one stream per
// request context (or the caller's), CUDA graphs, and kernels: dot_general and
// brt.matmul through cuBLASLt, elementwise ops with broadcasting (kernels.cu),
// generated kernels (brt.fused_elementwise, row reductions) loaded from the
// executable's PTX with cuModuleLoadData, brt.copy, reshape and constant.
// Only the plugin ABI crosses this boundary; no exception escapes it.
#include <cublasLt.h>
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "kernels.h"

namespace brt::cuda {
namespace {

// Thrown inside prepare/run helpers only, turned into an ABI error at the edge.
struct Error : std::runtime_error {
  int32_t code;
  Error(int32_t c, const std::string& m) : std::runtime_error(m), code(c) {}
};

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw Error(BRT_ERROR_INTERNAL, std::string(what) + ": " + cudaGetErrorString(e));
}
void Check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    throw Error(BRT_ERROR_INTERNAL, std::string(what) + ": " + (s ? s : "CUDA driver error"));
  }
}
void Check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw Error(BRT_ERROR_INTERNAL, std::string(what) + ": cuBLASLt status " + std::to_string(s));
}

int32_t Report(BrtErrorBuffer* e, int32_t code, const std::string& message) {
  if (e) std::snprintf(e->message, sizeof(e->message), "%s", message.c_str());
  return code;
}

template <typename F>
int32_t Guard(BrtErrorBuffer* e, F&& f) {
  try {
    f();
    return BRT_OK;
  } catch (const Error& x) {
    return Report(e, x.code, x.what());
  } catch (const std::exception& x) {
    return Report(e, BRT_ERROR_INTERNAL, x.what());
  }
}

int64_t NumElements(const BrtTensorDesc& t) {
  int64_t n = 1;
  for (int i = 0; i < t.rank; ++i) n *= t.dims[i];
  return n;
}

const BrtAttr* FindAttr(const BrtOpDesc* op, const char* name) {
  for (int i = 0; i < op->num_attrs; ++i)
    if (!std::strcmp(op->attrs[i].name, name)) return &op->attrs[i];
  return nullptr;
}

// --- devices and memory -------------------------------------------------------

// Per device: the default stream-ordered pool (cached memory is kept up to the
// release threshold, BRT_CUDA_POOL_RELEASE_BYTES, default: all of it) and a
// stream for allocations, so memory is ready for any stream when returned.
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
    Check(cudaSetDevice(ordinal), "cudaSetDevice");
    Check(cudaDeviceGetDefaultMemPool(&d.pool, ordinal), "cudaDeviceGetDefaultMemPool");
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
    Check(cudaSetDevice(ordinal), "cudaSetDevice");
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
    Check(cudaFreeAsync(p, d.alloc_stream), "cudaFreeAsync");
  } catch (const Error& e) {
    std::fprintf(stderr, "brt cuda: %s\n", e.what());
  }
}

void Trim(int32_t ordinal) {
  try {
    DeviceState& d = Device(ordinal);
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

constexpr size_t kMatmulWorkspace = 32u << 20;

// A request context's stream, with the cuBLASLt handle and workspace its
// matmuls share (ops on one stream never overlap).
struct Queue {
  int device = 0;
  cudaStream_t stream = nullptr;
  bool owned = true;
  cublasLtHandle_t lt = nullptr;
  void* workspace = nullptr;
};

Queue* MakeQueue(int32_t ordinal, cudaStream_t native) {
  Device(ordinal);
  auto* q = new Queue;
  q->device = ordinal;
  try {
    Check(cudaSetDevice(ordinal), "cudaSetDevice");
    if (native) {
      q->stream = native, q->owned = false;
    } else {
      Check(cudaStreamCreateWithFlags(&q->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    }
    Check(cublasLtCreate(&q->lt), "cublasLtCreate");
    Check(cudaMallocAsync(&q->workspace, kMatmulWorkspace, q->stream), "matmul workspace");
  } catch (...) {
    if (q->owned && q->stream) cudaStreamDestroy(q->stream);
    delete q;
    throw;
  }
  return q;
}

int32_t CreateQueue(int32_t ordinal, void** queue, BrtErrorBuffer* e) {
  return Guard(e, [&] { *queue = MakeQueue(ordinal, nullptr); });
}

int32_t WrapQueue(int32_t ordinal, void* native, void** queue, BrtErrorBuffer* e) {
  return Guard(e, [&] { *queue = MakeQueue(ordinal, static_cast<cudaStream_t>(native)); });
}

void DestroyQueue(void* queue) {
  auto* q = static_cast<Queue*>(queue);
  if (!q) return;
  cudaFreeAsync(q->workspace, q->stream);
  cudaStreamSynchronize(q->stream);
  cublasLtDestroy(q->lt);
  if (q->owned) cudaStreamDestroy(q->stream);
  delete q;
}

int32_t SynchronizeQueue(void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    Check(cudaStreamSynchronize(static_cast<Queue*>(queue)->stream), "running the queued work");
  });
}

int32_t Copy(int32_t ordinal, void* dst, const void* src, size_t bytes, int32_t direction,
             void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    Check(cudaSetDevice(ordinal), "cudaSetDevice");
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
    Check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), static_cast<Queue*>(queue)->stream),
          "cudaGraphLaunch");
  });
}

void DestroyGraph(void* graph) { cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph)); }

// --- kernels ------------------------------------------------------------------

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void Run(void* const* b, Queue* q) = 0;
};

struct KindEntry {
  const char* kind;
  int op;  // UnaryOp/BinaryOp for elementwise kinds
};

const KindEntry kUnary[] = {{"negate", kNegate}, {"abs", kAbs},     {"exponential", kExp},
                            {"log", kLog},       {"tanh", kTanh},   {"logistic", kLogistic},
                            {"sqrt", kSqrt},     {"rsqrt", kRsqrt}, {"floor", kFloor},
                            {"ceil", kCeil},     {"sine", kSin},    {"cosine", kCos}};
const KindEntry kBinary[] = {{"add", kAdd},       {"subtract", kSubtract}, {"multiply", kMultiply},
                             {"divide", kDivide}, {"maximum", kMaximum},   {"minimum", kMinimum},
                             {"power", kPower}};

int FindOp(const char* kind) {
  for (const KindEntry& k : kUnary)
    if (!std::strcmp(kind, k.kind)) return k.op;
  for (const KindEntry& k : kBinary)
    if (!std::strcmp(kind, k.kind)) return k.op;
  return -1;
}

// Strides of `in` broadcast (NumPy rules, aligned right) to the result's shape.
void BroadcastStrides(const BrtTensorDesc& in, const BrtTensorDesc& out, long long* strides) {
  long long st = 1;
  for (int d = out.rank - 1, i = in.rank - 1; d >= 0; --d, --i) {
    const int64_t size = i >= 0 ? in.dims[i] : 1;
    if (i >= 0 && size != 1 && size != out.dims[d])
      throw Error(BRT_ERROR_INVALID_ARGUMENT, "operand does not broadcast to the result");
    strides[d] = size == 1 ? 0 : st;
    st *= size;
  }
}

class ElementwiseKernel final : public Kernel {
 public:
  ElementwiseKernel(const BrtOpDesc* op, int code) {
    const BrtTensorDesc& out = op->results[0];
    if (out.rank > kMaxRank) throw Error(BRT_ERROR_UNSUPPORTED, "rank above 8");
    p_ = {};
    p_.op = code, p_.rank = out.rank, p_.n = NumElements(out);
    for (int d = 0; d < out.rank; ++d) p_.dims[d] = out.dims[d];
    BroadcastStrides(op->operands[0], out, p_.a_strides);
    binary_ = op->num_operands == 2;
    if (binary_) BroadcastStrides(op->operands[1], out, p_.b_strides);
    dtype_ = out.dtype;
  }
  void Run(void* const* b, Queue* q) override {
    Check(LaunchElementwise(p_, dtype_, b[0], binary_ ? b[1] : nullptr, b[binary_ ? 2 : 1],
                            q->stream),
          "elementwise kernel");
  }

 private:
  ElementwiseParams p_;
  bool binary_ = false;
  int dtype_ = 0;
};

// brt.copy (host<->device or device<->device), reshape: a byte copy in stream order.
class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(const BrtOpDesc* op)
      : bytes_(NumElements(op->results[0]) * brt_dtype_size(op->results[0].dtype)) {}
  void Run(void* const* b, Queue* q) override {
    if (bytes_) Check(cudaMemcpyAsync(b[1], b[0], bytes_, cudaMemcpyDefault, q->stream), "copy");
  }

 private:
  size_t bytes_;
};

// constant: the bytes go to the device once, at prepare.
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const BrtOpDesc* op) {
    const BrtAttr* v = FindAttr(op, "value");
    bytes_ = NumElements(op->results[0]) * brt_dtype_size(op->results[0].dtype);
    if (!v || v->kind != BRT_ATTR_BYTES || static_cast<size_t>(v->num_bytes) != bytes_)
      throw Error(BRT_ERROR_INVALID_ARGUMENT, "constant: 'value' must hold the result's bytes");
    Check(cudaMalloc(&data_, bytes_ ? bytes_ : 1), "cudaMalloc");
    Check(cudaMemcpy(data_, v->bytes, bytes_, cudaMemcpyHostToDevice), "uploading a constant");
  }
  ~ConstantKernel() override { cudaFree(data_); }
  void Run(void* const* b, Queue* q) override {
    if (bytes_)
      Check(cudaMemcpyAsync(b[0], data_, bytes_, cudaMemcpyDeviceToDevice, q->stream), "constant");
  }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

// A generated kernel from the executable: the module is loaded once per
// prepared op (once per Session for static shapes) and launched with the op's
// buffers as its parameters, in order.
class GeneratedKernel final : public Kernel {
 public:
  explicit GeneratedKernel(const BrtOpDesc* op) {
    if (!BRT_STRUCT_HAS(BrtOpDesc, op, kernel_image) || !op->kernel_image)
      throw Error(BRT_ERROR_UNSUPPORTED,
                  std::string(op->kind) +
                      " on CUDA runs generated code only: compile with brt-compile --target=cuda");
    if (std::strncmp(op->kernel_target, "ptx:", 4))
      throw Error(BRT_ERROR_UNSUPPORTED, std::string("kernel '") + op->kernel_name + "' targets '" +
                                             op->kernel_target + "', not PTX");
    // cuModuleLoadData wants NUL-terminated PTX text.
    std::string ptx(reinterpret_cast<const char*>(op->kernel_image), op->kernel_image_size);
    Check(cuInit(0), "cuInit");
    Check(cudaFree(nullptr), "creating the primary context");  // makes it current
    Check(cuModuleLoadData(&module_, ptx.c_str()), "cuModuleLoadData");
    Check(cuModuleGetFunction(&function_, module_, op->kernel_name), "cuModuleGetFunction");
    const BrtAttr* block = FindAttr(op, "block_size");
    block_ = block ? static_cast<unsigned>(block->i) : 256;
    // Grid-stride loops: a row reduction takes a block per output element, an
    // elementwise kernel a thread per element; at most 65535 blocks.
    const int64_t n = NumElements(op->results[0]);
    const int64_t blocks = !std::strcmp(op->kind, "reduce") ? n : (n + block_ - 1) / block_;
    grid_ = static_cast<unsigned>(std::max<int64_t>(1, std::min<int64_t>(blocks, 65535)));
    num_buffers_ = op->num_operands + op->num_results;
    if (num_buffers_ > kMaxBuffers)
      throw Error(BRT_ERROR_UNSUPPORTED, std::string("kernel '") + op->kernel_name + "' takes " +
                                             std::to_string(num_buffers_) + " buffers; at most " +
                                             std::to_string(kMaxBuffers) + " are supported");
  }
  ~GeneratedKernel() override {
    if (module_) cuModuleUnload(module_);
  }
  void Run(void* const* b, Queue* q) override {
    // The kernel's parameters are the buffer pointers, in order. Local: the
    // state is shared by concurrent request contexts.
    void* params[kMaxBuffers];
    for (int i = 0; i < num_buffers_; ++i) params[i] = const_cast<void**>(&b[i]);
    Check(cuLaunchKernel(function_, grid_, 1, 1, block_, 1, 1, 0, q->stream, params, nullptr),
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

std::vector<int64_t> Ints(const BrtOpDesc* op, const char* name) {
  const BrtAttr* a = FindAttr(op, name);
  if (!a || a->kind != BRT_ATTR_INTS) return {};
  return std::vector<int64_t>(a->ints, a->ints + a->num_ints);
}

// dot_general / brt.matmul through cuBLASLt. Layouts: leading batch dims
// (same on both sides), one free and one contracting dim per operand, either
// order (so transposed operands need no copy). Row-major C = A B is computed
// as column-major C^T = B^T A^T. Bias (over N) and relu use the epilogue;
// tanh and exact GELU run as an elementwise kernel after it.
class MatmulKernel final : public Kernel {
 public:
  explicit MatmulKernel(const BrtOpDesc* op) {
    const BrtTensorDesc &l = op->operands[0], &r = op->operands[1], &o = op->results[0];
    const auto lb = Ints(op, "lhs_batching_dimensions"), rb = Ints(op, "rhs_batching_dimensions");
    const auto lc = Ints(op, "lhs_contracting_dimensions"),
               rc = Ints(op, "rhs_contracting_dimensions");
    const int nb = static_cast<int>(lb.size());
    auto unsupported = [&] {
      return Error(BRT_ERROR_UNSUPPORTED,
                   std::string(op->kind) +
                       ": this layout is not supported on CUDA (want leading batch dims and one "
                       "free and one contracting dim per operand)");
    };
    if (lb != rb || lc.size() != 1 || rc.size() != 1 || l.rank != nb + 2 || r.rank != nb + 2)
      throw unsupported();
    for (int i = 0; i < nb; ++i)
      if (lb[i] != i) throw unsupported();
    int64_t batch = 1;
    for (int i = 0; i < nb; ++i) batch *= l.dims[i];
    const bool lhs_t = lc[0] == nb;      // lhs stored [K, M]
    const bool rhs_t = rc[0] == nb + 1;  // rhs stored [N, K]
    const int64_t M = l.dims[lhs_t ? nb + 1 : nb], K = l.dims[lc[0]];
    const int64_t N = r.dims[rhs_t ? nb : nb + 1];
    if (r.dims[rc[0]] != K) throw Error(BRT_ERROR_INVALID_ARGUMENT, "contracting sizes differ");
    dtype_ = o.dtype;
    const cudaDataType_t t = CudaType(o.dtype);
    bias_ = op->num_operands == 3;
    result_ = bias_ ? 3 : 2;
    const BrtAttr* act = FindAttr(op, "activation");
    const std::string activation = act && act->kind == BRT_ATTR_STRING ? act->str : "none";
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    if (o.dtype == BRT_DTYPE_F32 && std::getenv("BRT_CUDA_ALLOW_TF32"))
      compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    Check(cublasLtMatmulDescCreate(&desc_, compute, CUDA_R_32F), "cublasLtMatmulDescCreate");
    // Column-major view: C^T[N, M] = op(B^T)[N, K] * op(A^T)[K, M].
    const cublasOperation_t ta = rhs_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t tb = lhs_t ? CUBLAS_OP_T : CUBLAS_OP_N;
    Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)),
          "TRANSA");
    Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)),
          "TRANSB");
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (bias_)
      epilogue = activation == "relu" ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
    else if (activation == "relu")
      epilogue = CUBLASLT_EPILOGUE_RELU;
    if (activation == "tanh") post_ = kTanh;
    if (activation == "gelu") post_ = kGeluErf;
    Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                         sizeof(epilogue)),
          "EPILOGUE");
    // Layouts (column-major): B^T is [N,K] with ld N (or [K,N] ld K when
    // transposed), A^T is [K,M] ld K (or [M,K] ld M), C^T is [N,M] ld N.
    auto layout = [&](cublasLtMatrixLayout_t* m, uint64_t rows, uint64_t cols, int64_t ld,
                      int64_t stride) {
      Check(cublasLtMatrixLayoutCreate(m, t, rows, cols, ld), "cublasLtMatrixLayoutCreate");
      const int32_t count = static_cast<int32_t>(batch);
      Check(cublasLtMatrixLayoutSetAttribute(*m, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof(count)),
            "BATCH_COUNT");
      Check(cublasLtMatrixLayoutSetAttribute(*m, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof(stride)),
            "BATCH_OFFSET");
    };
    layout(&a_, rhs_t ? K : N, rhs_t ? N : K, rhs_t ? K : N, K * N);
    layout(&b_, lhs_t ? M : K, lhs_t ? K : M, lhs_t ? M : K, M * K);
    layout(&c_, N, M, N, M * N);
    cublasLtHandle_t handle = nullptr;
    Check(cublasLtCreate(&handle), "cublasLtCreate");
    cublasLtMatmulPreference_t pref = nullptr;
    Check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = kMatmulWorkspace;
    Check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                               sizeof(ws)),
          "MAX_WORKSPACE_BYTES");
    int found = 0;
    const cublasStatus_t s =
        cublasLtMatmulAlgoGetHeuristic(handle, desc_, a_, b_, c_, c_, pref, 1, &algo_, &found);
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtDestroy(handle);
    if (s != CUBLAS_STATUS_SUCCESS || found == 0)
      throw Error(BRT_ERROR_UNSUPPORTED,
                  std::string(op->kind) + ": cuBLASLt has no algorithm for " + std::to_string(M) +
                      "x" + std::to_string(K) + "x" + std::to_string(N));
    if (post_ >= 0) {
      post_params_ = {};
      post_params_.op = post_, post_params_.rank = 1, post_params_.n = batch * M * N;
      post_params_.dims[0] = post_params_.n, post_params_.a_strides[0] = 1;
    }
  }
  ~MatmulKernel() override {
    cublasLtMatrixLayoutDestroy(a_);
    cublasLtMatrixLayoutDestroy(b_);
    cublasLtMatrixLayoutDestroy(c_);
    cublasLtMatmulDescDestroy(desc_);
  }
  void Run(void* const* b, Queue* q) override {
    if (bias_)
      Check(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &b[2],
                                           sizeof(void*)),
            "BIAS_POINTER");
    const float one = 1.f, zero = 0.f;
    Check(cublasLtMatmul(q->lt, desc_, &one, b[1], a_, b[0], b_, &zero, b[result_], c_, b[result_],
                         c_, &algo_.algo, q->workspace, kMatmulWorkspace, q->stream),
          "cublasLtMatmul");
    if (post_ >= 0)
      Check(LaunchElementwise(post_params_, dtype_, b[result_], nullptr, b[result_], q->stream),
            "matmul activation");
  }

 private:
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_{};
  bool bias_ = false;
  int result_ = 2, dtype_ = 0, post_ = -1;
  ElementwiseParams post_params_{};
};

// --- the kernel table -----------------------------------------------------------

enum class Family { kElementwise, kMatmul, kGenerated, kCopy, kConstant };

struct TableRow {
  const char* kind;
  Family family;
  const char* dtypes;
  bool capturable;
};

std::vector<TableRow> Table() {
  std::vector<TableRow> t;
  for (const KindEntry& k : kUnary)
    t.push_back({k.kind, Family::kElementwise, "f32,f16,bf16", true});
  for (const KindEntry& k : kBinary)
    t.push_back({k.kind, Family::kElementwise, "f32,f16,bf16", true});
  t.push_back({"dot_general", Family::kMatmul, "f32,f16,bf16", true});
  t.push_back({"brt.matmul", Family::kMatmul, "f32,f16,bf16", true});
  t.push_back({"brt.fused_elementwise", Family::kGenerated, "f32", true});
  t.push_back({"reduce", Family::kGenerated, "f32", true});
  // From pageable host memory a copy is not recordable into a graph.
  t.push_back({"brt.copy", Family::kCopy, "any", false});
  t.push_back({"reshape", Family::kCopy, "any", true});
  t.push_back({"constant", Family::kConstant, "any", true});
  return t;
}

const std::vector<TableRow>& Rows() {
  static const std::vector<TableRow> rows = Table();
  return rows;
}

bool DTypeListed(const char* list, int32_t dtype) {
  if (!std::strcmp(list, "any")) return true;
  const char* name = dtype == BRT_DTYPE_F32    ? "f32"
                     : dtype == BRT_DTYPE_F16  ? "f16"
                     : dtype == BRT_DTYPE_BF16 ? "bf16"
                                               : "?";
  return std::strstr(list, name) != nullptr;
}

int32_t PrepareKernel(const void* data, const BrtOpDesc* op, void** state, BrtErrorBuffer* e) {
  const auto* row = static_cast<const TableRow*>(data);
  return Guard(e, [&] {
    Kernel* k = nullptr;
    switch (row->family) {
      case Family::kElementwise:
        k = new ElementwiseKernel(op, FindOp(op->kind));
        break;
      case Family::kMatmul:
        k = new MatmulKernel(op);
        break;
      case Family::kGenerated:
        k = new GeneratedKernel(op);
        break;
      case Family::kCopy:
        k = new CopyKernel(op);
        break;
      case Family::kConstant:
        k = new ConstantKernel(op);
        break;
    }
    *state = k;
  });
}

void ReleaseKernel(void* state) { delete static_cast<Kernel*>(state); }

int32_t RunKernel(void* state, void* const* buffers, void* queue, BrtErrorBuffer* e) {
  if (!queue) return Report(e, BRT_ERROR_INVALID_ARGUMENT, "CUDA kernels need a queue");
  return Guard(e, [&] { static_cast<Kernel*>(state)->Run(buffers, static_cast<Queue*>(queue)); });
}

int32_t ResolveKernel(const BrtOpSignature* sig, BrtKernel* kernel, BrtErrorBuffer* e) {
  const int32_t key = sig->num_results ? sig->result_dtypes[0] : BRT_DTYPE_INVALID;
  for (const TableRow& row : Rows()) {
    if (std::strcmp(row.kind, sig->kind)) continue;
    if (!DTypeListed(row.dtypes, key))
      return Report(e, BRT_ERROR_UNSUPPORTED,
                    std::string(sig->kind) + " on CUDA takes " + row.dtypes);
    *kernel = {};
    kernel->struct_size = sizeof(BrtKernel);
    kernel->kernel_data = &row;
    kernel->prepare = PrepareKernel;
    kernel->release_state = ReleaseKernel;
    kernel->run = RunKernel;
    kernel->flags = row.capturable ? 0u : BRT_KERNEL_NOT_CAPTURABLE;
    return BRT_OK;
  }
  return Report(e, BRT_ERROR_UNSUPPORTED,
                std::string("no CUDA kernel for '") + sig->kind + "' in this version");
}

int32_t KernelCount() { return static_cast<int32_t>(Rows().size()); }

int32_t KernelInfo(int32_t i, BrtKernelInfo* info) {
  if (i < 0 || i >= KernelCount()) return BRT_ERROR_INVALID_ARGUMENT;
  *info = {Rows()[i].kind, BRT_DEVICE_CUDA, Rows()[i].dtypes};
  return BRT_OK;
}

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
    a.wrap_queue = WrapQueue;
    a.trim = Trim;
    a.reserved_bytes = ReservedBytes;
    a.begin_capture = BeginCapture;
    a.end_capture = EndCapture;
    a.launch_graph = LaunchGraph;
    a.destroy_graph = DestroyGraph;
    return a;
  }();
  return &api;
}

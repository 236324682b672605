// The library-backed kernels: dot_general and brt.matmul through cuBLASLt,
// convolution and brt.conv through cuDNN, from the plans of library_plans.h.
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "common/cublaslt_util.h"
#include "kernels.h"
#include "library_plans.h"
#include "runtime.h"

namespace brt::cuda {
namespace {

cudaDataType_t CudaType(int32_t dtype) {
  if (dtype == BRT_DTYPE_C64) return CUDA_C_32F;
  if (dtype == BRT_DTYPE_C128) return CUDA_C_64F;
  if (auto t = ops::CublasLtType(dtype)) return *t;
  throw Error(BRT_ERROR_UNSUPPORTED, "cuBLASLt path takes f32, f16, bf16, c64 and c128");
}

// dot_general / brt.matmul through cuBLASLt (GemmPlan, library_plans.h):
// packed operands are copied into per-context scratch first; the bias uses
// the epilogue, the activation runs after it (cuBLASLt's relu epilogue is
// not documented to keep NaN, as StableHLO's maximum(x, 0) does). Complex
// numbers compute in their parts' precision, with complex alpha and beta.
class MatmulKernel final : public Kernel {
 public:
  MatmulKernel(const OpInfo& op, const GemmPlan& g) : g_(g) {
    const ops::Activation activation = g_.activation;
    compute_ = g_.dtype == BRT_DTYPE_C128 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
    if (g_.dtype == BRT_DTYPE_F32 && std::getenv("BRT_CUDA_ALLOW_TF32"))
      compute_ = CUBLAS_COMPUTE_32F_FAST_TF32;
    // alpha = 1 and beta = 0 in the scale type: the real part first.
    if (g_.dtype == BRT_DTYPE_C64 || g_.dtype == BRT_DTYPE_C128) {
      scale_type_ = CudaType(g_.dtype);
      const float one_f = 1.f;
      const double one_d = 1.0;
      if (g_.dtype == BRT_DTYPE_C64)
        std::memcpy(one_, &one_f, sizeof(one_f));
      else
        std::memcpy(one_, &one_d, sizeof(one_d));
    } else {
      const float one_f = 1.f;
      std::memcpy(one_, &one_f, sizeof(one_f));
    }
    if (g_.bias) epilogue_ = CUBLASLT_EPILOGUE_BIAS;
    post_ = activation != ops::Activation::kNone;
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
    const bool found =
        ops::FindCublasLtAlgorithm(nullptr, desc, a_, b_, c_, alignment, kMatmulWorkspace, algo);
    cublasLtMatmulDescDestroy(desc);
    return found;
  }

  cublasLtMatmulDesc_t NewDesc() const {
    cublasLtMatmulDesc_t desc = nullptr;
    Check(cublasLtMatmulDescCreate(&desc, compute_, scale_type_), "cublasLtMatmulDescCreate");
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
      const cublasLtMatmulAlgo_t* algo =
          aligned ? &k_.algo_aligned_.algo : &k_.algo_unaligned_.algo;
      Check(cublasLtMatmul(q->lt, desc_, k_.one_, rhs, k_.a_, lhs, k_.b_, k_.zero_, out, k_.c_, out,
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
  cudaDataType_t scale_type_ = CUDA_R_32F;
  alignas(16) unsigned char one_[16] = {}, zero_[16] = {};  // alpha and beta, in scale_type_
  cublasLtEpilogue_t epilogue_ = CUBLASLT_EPILOGUE_DEFAULT;
  cublasLtMatrixLayout_t a_ = nullptr, b_ = nullptr, c_ = nullptr;
  cublasLtMatmulHeuristicResult_t algo_aligned_{}, algo_unaligned_{};
  bool aligned_ = false, unaligned_ = false;
  std::unique_ptr<Kernel> fallback_;  // brt's own kernel, where no unaligned algorithm exists
  bool post_ = false;                 // the activation runs after cuBLASLt
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

}  // namespace

// cuBLASLt for f32, f16, bf16 (and c64, c128 without bias or activation),
// brt's own kernel for other dtypes, for
// empty operands (a zero M, N or K never reaches the library) and where
// cuBLASLt refuses the layout or has no algorithm; that last case is said
// once per process, naming why.
Kernel* MakeMatmul(const OpInfo& op) {
  if (!GemmSupports(op)) return MakeOwnDot(op);
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

Kernel* MakeConvolution(const OpInfo& op) { return new ConvKernel(op); }

}  // namespace brt::cuda

// A CUDA-kind provider that runs the CUDA provider's own kernels
// (own_kernels.cc over kernels_*.cu) on the host: device memory is host
// memory, a queue runs its work at once, and blocks run one after another
// (emulation.h). In place of cuBLASLt, cuDNN and cuFFT it computes, on the
// host, what the provider's calls to them compute, from the same plans
// (library_plans.h): a column-major strided batched GEMM, a
// cross-correlation over Nd descriptors, and unscaled batched transforms
// (ops/fft_host.h, the CPU provider's KISS FFT) between the provider's own
// steps around cuFFT (RunFftSteps). The op tests and the JAX end-to-end
// cases run through it with BRT_TEST_DEVICE=cuda, so the CUDA provider's
// plans, parameters and kernel bodies are checked against the same
// references on machines without a GPU. Generated PTX is not emulated: fused
// programs run through the own interpreter kernel instead. Graphs are: a
// capture records each kernel with its buffer addresses as they are then
// (what a CUDA graph keeps of a launch) instead of running it, and a launch
// runs the recording.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "cuda/library_plans.h"
#include "cuda/runtime.h"
#include "ops/fft_host.h"

namespace brt::cuda {

void* DeviceAlloc(size_t bytes) { return std::malloc(bytes ? bytes : 1); }
void UseDevice(int) {}
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

// Host values of a 16-bit or 32-bit float tensor, in double.
double Load(int32_t dtype, const void* p, int64_t i) {
  if (dtype == BRT_DTYPE_F16) return __half2float(static_cast<const __half*>(p)[i]);
  if (dtype == BRT_DTYPE_BF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
  return static_cast<const float*>(p)[i];
}
void Store(int32_t dtype, void* p, int64_t i, double v) {
  const float f = static_cast<float>(v);
  if (dtype == BRT_DTYPE_F16)
    static_cast<__half*>(p)[i] = __float2half_rn(f);
  else if (dtype == BRT_DTYPE_BF16)
    static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(f);
  else
    static_cast<float*>(p)[i] = f;
}

// What MatmulKernel's cublasLtMatmul computes for its GemmPlan.
class EmulatedGemm final : public Kernel {
 public:
  explicit EmulatedGemm(const GemmPlan& g) : g_(g) {}
  Runnable* NewInstance() const override { return new Instance(*this); }
  void Run(void* const*, Queue*) override {}

 private:
  class Instance final : public Runnable {
   public:
    explicit Instance(const EmulatedGemm& k)
        : g_(k.g_), lhs_(g_.lhs.packed_bytes), rhs_(g_.rhs.packed_bytes) {}
    void Run(void* const* b, Queue* q) override {
      const size_t es = brt_dtype_size(g_.dtype);
      const void* a = b[1];  // column-major: A is the dot's rhs, B its lhs
      const void* bm = b[0];
      if (g_.rhs.packed_bytes) {
        Check(LaunchStridedCopy(g_.rhs.pack, es, b[1], rhs_.get(), q->stream), "packing rhs");
        a = rhs_.get();
      }
      if (g_.lhs.packed_bytes) {
        Check(LaunchStridedCopy(g_.lhs.pack, es, b[0], lhs_.get(), q->stream), "packing lhs");
        bm = lhs_.get();
      }
      void* c = b[g_.result];
      if (g_.dtype == BRT_DTYPE_C64) return ComplexGemm<float>(a, bm, c);
      if (g_.dtype == BRT_DTYPE_C128) return ComplexGemm<double>(a, bm, c);
      Loops<double>([&](int64_t e) { return Load(g_.dtype, a, e); },
                    [&](int64_t e) { return Load(g_.dtype, bm, e); },
                    [&](int64_t at, int64_t row, double acc) {
                      if (g_.bias) acc += Load(g_.dtype, b[2], row);
                      Store(g_.dtype, c, at, ops::Activate(g_.activation, acc));
                    });
    }

   private:
    // Per batch, C[i, j] = sum over l of op(A)[i, l] op(B)[l, j], column-major,
    // accumulated in Acc; store(C's element, i, the sum).
    template <typename Acc, typename LoadA, typename LoadB, typename StoreC>
    void Loops(LoadA load_a, LoadB load_b, StoreC store) const {
      for (int64_t batch = 0; batch < g_.batch; ++batch)
        for (int64_t j = 0; j < g_.n; ++j)
          for (int64_t i = 0; i < g_.m; ++i) {
            Acc acc = 0;
            for (int64_t l = 0; l < g_.k; ++l) {
              const int64_t ai = g_.trans_a ? l + i * g_.lda : i + l * g_.lda;
              const int64_t bi = g_.trans_b ? j + l * g_.ldb : l + j * g_.ldb;
              acc += load_a(batch * g_.stride_a + ai) * load_b(batch * g_.stride_b + bi);
            }
            store(batch * g_.stride_c + i + j * g_.ldc, i, acc);
          }
    }
    // c64 and c128 (no bias or activation: GemmSupports), in complex double.
    template <typename T>
    void ComplexGemm(const void* a, const void* bm, void* c) const {
      using Z = std::complex<T>;
      using Acc = std::complex<double>;
      Loops<Acc>([&](int64_t e) { return Acc(static_cast<const Z*>(a)[e]); },
                 [&](int64_t e) { return Acc(static_cast<const Z*>(bm)[e]); },
                 [&](int64_t at, int64_t, Acc acc) { static_cast<Z*>(c)[at] = Z(acc); });
    }

    const GemmPlan& g_;
    DeviceBuffer lhs_, rhs_;
  };
  GemmPlan g_;
};

Kernel* MakeEmulatedMatmul(const ops::OpInfo& op) {
  if (!GemmSupports(op)) return MakeOwnDot(op);
  return new EmulatedGemm(PlanGemm(op));
}

// What ConvKernel's cudnnConvolutionForward (cross-correlation) computes for
// its ConvLaunchPlan, with the same filter packing, input padding and
// bias/activation kernels.
class EmulatedConv final : public Kernel {
 public:
  explicit EmulatedConv(const ops::OpInfo& op) : c_(PlanConvLaunch(op)) {}
  Runnable* NewInstance() const override { return new Instance(*this); }
  void Run(void* const*, Queue*) override {}

 private:
  class Instance final : public Runnable {
   public:
    explicit Instance(const EmulatedConv& k)
        : c_(k.c_), weights_(c_.weight_bytes), input_(c_.input_bytes) {}
    void Run(void* const* b, Queue* q) override {
      const ops::ConvPlan& p = c_.conv;
      void* out = b[c_.result];
      if (p.empty_result) return;
      if (p.empty_contraction) return ZeroAsync(out, c_.out_bytes, q->stream);
      const size_t es = brt_dtype_size(c_.dtype);
      const void* w = b[1];
      if (c_.weight_bytes) {
        Check(LaunchStridedCopy(c_.weight_copy, es, b[1], weights_.get(), q->stream), "filter");
        w = weights_.get();
      }
      const void* x = b[0];
      if (c_.input_bytes) {
        ZeroAsync(input_.get(), c_.input_bytes, q->stream);
        Check(LaunchStridedCopy(c_.input_copy, es, b[0],
                                static_cast<char*>(input_.get()) + c_.input_offset, q->stream),
              "padding");
        x = input_.get();
      }
      CrossCorrelate(x, w, out);
      if (p.has_bias) {
        const void* operands[] = {out, b[2]};
        Check(LaunchElementwise(c_.bias, c_.dtype, c_.dtype, operands, out, q->stream), "bias");
      }
      if (p.activation != ops::Activation::kNone) {
        const void* operands[] = {out};
        Check(LaunchElementwise(c_.activation, c_.dtype, c_.dtype, operands, out, q->stream),
              "activation");
      }
    }

   private:
    // y[n, o, s] = sum over c in o's group and window k of
    // x[n, g * Cg + c, s * stride + k * dilation - pad] * w[o, c, k].
    void CrossCorrelate(const void* x, const void* w, void* y) const {
      const auto& xd = c_.x_dims;
      const auto& wd = c_.w_dims;
      const auto& yd = c_.y_dims;
      const int spatial = static_cast<int>(xd.size()) - 2;
      const int64_t groups = c_.conv.groups, cg = wd[1], og = wd[0] / groups;
      const std::vector<int64_t> wstr = ops::TensorInfo{c_.dtype, wd, 1}.Strides();
      int64_t y_spatial = 1, w_spatial = 1;
      for (int s = 0; s < spatial; ++s) y_spatial *= yd[2 + s], w_spatial *= wd[2 + s];
      std::vector<int64_t> ys(spatial), ks(spatial);
      for (int64_t n = 0; n < yd[0]; ++n)
        for (int64_t o = 0; o < yd[1]; ++o)
          for (int64_t yi = 0; yi < y_spatial; ++yi) {
            int64_t rest = yi;
            for (int s = spatial - 1; s >= 0; --s) ys[s] = rest % yd[2 + s], rest /= yd[2 + s];
            double acc = 0;
            for (int64_t c = 0; c < cg; ++c)
              for (int64_t ki = 0; ki < w_spatial; ++ki) {
                int64_t krest = ki,
                        xo = n * c_.x_strides[0] + ((o / og) * cg + c) * c_.x_strides[1];
                int64_t wo = o * wstr[0] + c * wstr[1];
                bool inside = true;
                for (int s = spatial - 1; s >= 0; --s) {
                  ks[s] = krest % wd[2 + s], krest /= wd[2 + s];
                  const int64_t pos = ys[s] * c_.strides[s] + ks[s] * c_.dilations[s] - c_.pads[s];
                  inside = inside && pos >= 0 && pos < xd[2 + s];
                  xo += pos * c_.x_strides[2 + s];
                  wo += ks[s] * wstr[2 + s];
                }
                if (inside) acc += Load(c_.dtype, x, xo) * Load(c_.dtype, w, wo);
              }
            int64_t yo = n * c_.y_strides[0] + o * c_.y_strides[1];
            for (int s = 0; s < spatial; ++s) yo += ys[s] * c_.y_strides[2 + s];
            Store(c_.dtype, y, yo, acc);
          }
    }
    const ConvLaunchPlan& c_;
    DeviceBuffer weights_, input_;
  };
  ConvLaunchPlan c_;
};

// What FftKernel's cuFFT plan computes for its FftLaunchPlan, batch by
// batch, inside the same steps (the IRFFT operand's copy, the scaling).
class EmulatedFft final : public Kernel {
 public:
  explicit EmulatedFft(const ops::OpInfo& op) : p_(PlanFftLaunch(op)) {}
  Runnable* NewInstance() const override {
    if (p_.fft.empty) return nullptr;
    if (p_.fft.complex_dtype == BRT_DTYPE_C64) return new Instance<float>(p_);
    return new Instance<double>(p_);
  }
  void Run(void* const*, Queue*) override {}

 private:
  template <typename T>
  class Instance final : public Runnable {
   public:
    explicit Instance(const FftLaunchPlan& p) : p_(p), fft_(p.fft), scratch_(p.scratch_bytes) {}
    void Run(void* const* b, Queue* q) override {
      const ops::FftPlan& f = p_.fft;
      const size_t in_elem = f.real_in() ? sizeof(T) : 2 * sizeof(T);
      const size_t out_elem = f.real_out() ? sizeof(T) : 2 * sizeof(T);
      RunFftSteps(p_, b[0], b[1], scratch_.get(), q->stream, [&](const void* in, void* out) {
        for (int64_t batch = 0; batch < f.batches; ++batch)
          fft_.Run(static_cast<const char*>(in) + batch * f.in_per_batch * in_elem,
                   static_cast<char*>(out) + batch * f.out_per_batch * out_elem);
      });
    }

   private:
    const FftLaunchPlan& p_;
    ops::HostFft<T> fft_;
    DeviceBuffer scratch_;
  };
  FftLaunchPlan p_;
};

// A graph: the kernels captured on a queue, each with its buffer addresses.
struct Graph {
  void* queue = nullptr;
  struct Launch {
    Runnable* kernel;
    std::vector<void*> buffers;
  };
  std::vector<Launch> launches;
};
// The capture under way on this thread (the provider captures thread-locally).
thread_local Graph* capturing = nullptr;

// A kernel (or an instance) that a capture on its queue records instead of running.
class Recordable final : public Kernel {
 public:
  Recordable(Runnable* inner, int num_buffers) : inner_(inner), num_buffers_(num_buffers) {}
  Runnable* NewInstance() const override {
    Runnable* instance = static_cast<Kernel*>(inner_.get())->NewInstance();
    return instance ? new Recordable(instance, num_buffers_) : nullptr;
  }
  void Run(void* const* b, Queue* q) override {
    if (capturing && capturing->queue == q)
      capturing->launches.push_back({inner_.get(), std::vector<void*>(b, b + num_buffers_)});
    else
      inner_->Run(b, q);
  }

 private:
  std::unique_ptr<Runnable> inner_;
  int num_buffers_;
};

const std::vector<TableRow>& Rows() {
  static const std::vector<TableRow> rows =
      KernelRows(&MakeEmulatedMatmul, &Make<EmulatedConv>, &Make<EmulatedFft>);
  return rows;
}

int32_t Prepare(const void* data, const BrtOpDesc* op, void** state, BrtErrorBuffer* e) {
  const auto* row = static_cast<const TableRow*>(data);
  return Guard(e, [&] {
    const ops::OpInfo info(*op);
    // The real provider launches the executable's PTX with its block size;
    // the emulation checks that size as it does, then runs its own kernel.
    if (row->may_be_generated && BRT_STRUCT_HAS(BrtOpDesc, op, kernel_image) && op->kernel_image)
      ops::PlanGeneratedLaunch(info);
    *state =
        static_cast<Runnable*>(new Recordable(row->make(info), op->num_operands + op->num_results));
  });
}

int32_t DeviceCount() { return 1; }

int32_t CreateQueue(int32_t, void** queue, BrtErrorBuffer*) {
  *queue = new Queue;
  return BRT_OK;
}

void DestroyQueue(void* queue) { delete static_cast<Queue*>(queue); }

int32_t SynchronizeQueue(void*, BrtErrorBuffer*) { return BRT_OK; }

int32_t BeginCapture(void* queue, BrtErrorBuffer* e) {
  if (capturing) return Report(e, BRT_ERROR_INTERNAL, "a capture is already under way");
  capturing = new Graph{queue, {}};
  return BRT_OK;
}

int32_t EndCapture(void* queue, void** graph, BrtErrorBuffer* e) {
  if (!capturing || capturing->queue != queue)
    return Report(e, BRT_ERROR_INTERNAL, "no capture is under way on this queue");
  *graph = std::exchange(capturing, nullptr);
  return BRT_OK;
}

int32_t LaunchGraph(void* graph, void* queue, BrtErrorBuffer* e) {
  return Guard(e, [&] {
    for (Graph::Launch& l : static_cast<Graph*>(graph)->launches)
      l.kernel->Run(l.buffers.data(), static_cast<Queue*>(queue));
  });
}

void DestroyGraph(void* graph) { delete static_cast<Graph*>(graph); }

const ops::KernelTable<TableRow> kTable = {&Rows, EntryPoints(Prepare), BRT_DEVICE_CUDA, "CUDA"};

BrtProviderApi MakeApi() {
  BrtProviderApi a = ops::ProviderApiHeader("cuda", BRT_DEVICE_CUDA);
  a.device_count = DeviceCount;
  a.allocate = ops::HostAllocate;
  a.deallocate = ops::HostDeallocate;
  a.copy = ops::HostCopy;
  BRT_SET_ENTRIES(a, BRT_QUEUE_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_GRAPH_ENTRIES);
  ops::SetKernelTable<kTable>(a);
  return a;
}

}  // namespace
}  // namespace brt::cuda

BRT_DEFINE_PROVIDER_ENTRY_POINT(brt::cuda::MakeApi)

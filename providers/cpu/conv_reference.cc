// convolution on the types oneDNN has no convolution for (f16, f64, the
// integers and i1): a plain loop over ops/op_plans.h's ConvPlan, one output
// element at a time, shared out over the Session's threads. Floats sum in
// their compute type (f32 for f16); integers wrap in their own width, as
// XLA's do; i1 is the or of ands.
#include "kernel.h"
#include "ops/op_plans.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

// The sum of products in T's arithmetic: wrapping for integers (computed on
// 64 unsigned bits, whose low bits are T's), logical for i1.
template <typename T>
struct ConvSum {
  using C = Compute<T>;
  static constexpr bool kWraps = std::is_integral_v<C> && !std::is_same_v<C, bool>;
  using Acc = std::conditional_t<kWraps, uint64_t, C>;
  Acc acc{};
  void Add(T a, T b) {
    if constexpr (std::is_same_v<C, bool>)
      acc = acc || (static_cast<bool>(a) && static_cast<bool>(b));
    else if constexpr (kWraps)
      acc += static_cast<uint64_t>(static_cast<int64_t>(a)) *
             static_cast<uint64_t>(static_cast<int64_t>(b));
    else
      acc += static_cast<C>(a) * static_cast<C>(b);
  }
  T Result() const { return T(static_cast<C>(acc)); }
};

class ReferenceConvolutionKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanConvolution(op);
    DispatchType(op.in[0].dtype, [&](auto v) { run_ = &Convolve<decltype(v)>; });
  }
  void Run(void* const* b) override { run_(p_, b[0], b[1], b[2]); }

 private:
  template <typename T>
  static void Convolve(const ConvPlan& p, const void* src, const void* wei, void* dst) {
    const T* x = static_cast<const T*>(src);
    const T* w = static_cast<const T*>(wei);
    T* y = static_cast<T*>(dst);
    const int ns = p.spatial;
    int64_t outputs = 1, window = 1;
    for (int64_t d : p.dst_dims) outputs *= d;
    for (int s = 0; s < ns; ++s) window *= p.wei_dims[2 + s];
    const int64_t in_per_group = p.wei_dims[1], out_per_group = p.dst_dims[1] / p.groups;
    ParallelFor(outputs, 256, [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) {
        // e's index in [N, O, spatial...], innermost last.
        int64_t index[2 + 3], rest = e;
        for (int d = 1 + ns; d >= 0; --d) index[d] = rest % p.dst_dims[d], rest /= p.dst_dims[d];
        const int64_t n = index[0], o = index[1], group = o / out_per_group;
        ConvSum<T> sum;
        for (int64_t k = 0; k < window; ++k) {
          int64_t src_at = n * p.src_strides[0], wei_at = o * p.wei_strides[0], tap = k;
          bool inside = true;
          for (int s = ns - 1; s >= 0; --s) {
            const int64_t ws = tap % p.wei_dims[2 + s];
            tap /= p.wei_dims[2 + s];
            const int64_t xs = index[2 + s] * p.strides[s] - p.pad_lo[s] + ws * p.dilations[s];
            inside = inside && xs >= 0 && xs < p.src_dims[2 + s];
            src_at += xs * p.src_strides[2 + s];
            wei_at += ws * p.wei_strides[2 + s];
          }
          if (!inside) continue;
          for (int64_t i = 0; i < in_per_group; ++i)
            sum.Add(x[src_at + (group * in_per_group + i) * p.src_strides[1]],
                    w[wei_at + i * p.wei_strides[1]]);
        }
        int64_t dst_at = 0;
        for (int d = 0; d < 2 + ns; ++d) dst_at += index[d] * p.dst_strides[d];
        y[dst_at] = sum.Result();
      }
    });
  }

  ConvPlan p_;
  void (*run_)(const ConvPlan&, const void*, const void*, void*) = nullptr;
};

}  // namespace

void RegisterReferenceConvolution(std::vector<KernelDef>& defs) {
  std::vector<int32_t> types = kIntTypes;
  types.insert(types.end(), {BRT_DTYPE_F16, BRT_DTYPE_F64, BRT_DTYPE_I1});
  defs.push_back({"convolution", types, &Make<ReferenceConvolutionKernel>});
}

}  // namespace brt::cpu

// reduce (one operand, one init value) and reduce_window.
#include <algorithm>
#include <type_traits>

#include "kernel.h"

namespace brt::cpu {
namespace {

enum class Reducer { kAdd, kMul, kMax, kMin, kAnd, kOr };

bool ParseReducer(const std::string& s, Reducer* r) {
  static const std::pair<const char*, Reducer> kNames[] = {
      {"add", Reducer::kAdd}, {"mul", Reducer::kMul}, {"max", Reducer::kMax},
      {"min", Reducer::kMin}, {"and", Reducer::kAnd}, {"or", Reducer::kOr}};
  for (auto [name, v] : kNames)
    if (s == name) return *r = v, true;
  return false;
}

template <Reducer R, typename C>
inline C Combine(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    if constexpr (R == Reducer::kAnd || R == Reducer::kMin || R == Reducer::kMul) return a && b;
    return a || b;
  } else if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    if constexpr (R == Reducer::kAdd) return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (R == Reducer::kMul)
      return static_cast<C>(static_cast<uint64_t>(static_cast<U>(a)) * static_cast<U>(b));
    if constexpr (R == Reducer::kMax) return a > b ? a : b;
    if constexpr (R == Reducer::kMin) return a < b ? a : b;
    if constexpr (R == Reducer::kAnd) return static_cast<C>(a & b);
    return static_cast<C>(a | b);
  } else {
    if constexpr (R == Reducer::kAdd) return a + b;
    if constexpr (R == Reducer::kMul) return a * b;
    if constexpr (R == Reducer::kMax) return (a > b || std::isnan(a)) ? a : b;
    if constexpr (R == Reducer::kMin) return (a < b || std::isnan(a)) ? a : b;
    return a;  // and/or are rejected for floats in Prepare
  }
}

// oneDNN reductions and pooling have no init operand: they compute as if it
// were the reducer's identity. This runs oneDNN when the init value (read
// per request) is that identity, and brt's loop otherwise.
class IdentityGuard final : public Runnable {
 public:
  IdentityGuard(CpuKernel& loop, std::unique_ptr<Runnable> dnnl, float identity)
      : loop_(loop), dnnl_(std::move(dnnl)), identity_(identity) {}
  void Run(void* const* b) override {
    if (*static_cast<const float*>(b[1]) == identity_)
      dnnl_->Run(b);
    else
      loop_.Run(b);
  }

 private:
  CpuKernel& loop_;
  std::unique_ptr<Runnable> dnnl_;
  float identity_;
};

// The instance of a kernel that may hand its work to oneDNN.
std::unique_ptr<Runnable> GuardedInstance(const CpuKernel& loop,
                                          const std::unique_ptr<CpuKernel>& dnnl, float identity) {
  if (!dnnl) return nullptr;
  // The loop kernel's Run() does not mutate it: it is shared by every request.
  return std::make_unique<IdentityGuard>(const_cast<CpuKernel&>(loop), dnnl->CreateInstance(),
                                         identity);
}

template <typename T>
constexpr bool ReducerValid(Reducer r) {
  using C = Compute<T>;
  if constexpr (std::is_floating_point_v<C>) return r != Reducer::kAnd && r != Reducer::kOr;
  return true;
}

// Collapsed layout: alternating runs of kept/reduced dimensions.
class ReduceKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(2);
    op.RequireSameDTypes();
    const TensorInfo& in = op.in[0];
    op.Require(op.in[1].rank() == 0, "init value must be a scalar");
    std::vector<int64_t> dims = op.Ints("dimensions");
    op.RequireDims(dims, in.rank(), "dimensions");
    std::string name = op.String("reducer");
    op.Require(ParseReducer(name, &reducer_),
               "reducer '" + name + "' is not add, mul, max, min, and or or");
    std::vector<bool> reduced(in.rank(), false);
    for (int64_t d : dims) reduced[d] = true;
    std::vector<int64_t> kept;
    for (int d = 0; d < in.rank(); ++d)
      if (!reduced[d]) kept.push_back(in.dims[d]);
    op.Require(kept == op.out[0].dims,
               "result shape " + FormatDims(op.out[0].dims) + " should be " + FormatDims(kept));
    // Output strides per input dimension (0 where reduced), then collapse.
    std::vector<int64_t> ostr(in.rank(), 0);
    for (int d = in.rank() - 1, s = 1; d >= 0; --d)
      if (!reduced[d]) ostr[d] = s, s *= in.dims[d];
    rank_ = 0;
    for (int d = 0; d < in.rank(); ++d) {
      if (in.dims[d] == 1) continue;
      if (rank_ > 0 && ostr_[rank_ - 1] == ostr[d] * in.dims[d] &&
          (ostr_[rank_ - 1] == 0) == (ostr[d] == 0)) {
        dims_[rank_ - 1] *= in.dims[d];
        ostr_[rank_ - 1] = ostr[d];
        continue;
      }
      dims_[rank_] = in.dims[d], ostr_[rank_] = ostr[d], ++rank_;
    }
    if (rank_ == 0) dims_[0] = 1, ostr_[0] = 0, rank_ = 1;
    in_numel_ = in.numel;
    out_numel_ = op.out[0].numel;
    DispatchType(in.dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>) {
        if (!ReducerValid<T>(reducer_)) return;
        switch (reducer_) {
          case Reducer::kAdd:
            fn_ = &Reduce<Reducer::kAdd, T>;
            break;
          case Reducer::kMul:
            fn_ = &Reduce<Reducer::kMul, T>;
            break;
          case Reducer::kMax:
            fn_ = &Reduce<Reducer::kMax, T>;
            break;
          case Reducer::kMin:
            fn_ = &Reduce<Reducer::kMin, T>;
            break;
          case Reducer::kAnd:
            fn_ = &Reduce<Reducer::kAnd, T>;
            break;
          case Reducer::kOr:
            fn_ = &Reduce<Reducer::kOr, T>;
            break;
        }
      }
    });
    if (!fn_)
      throw UnsupportedError("reduce: reducer '" + name + "' is not defined for " +
                             DTypeName(in.dtype));
    dnnl_ = MakeDnnlReduction(op);
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    return GuardedInstance(*this, dnnl_, 0.f);
  }
  void Run(void* const* b) override { fn_(*this, b[0], b[1], b[2]); }

 private:
  template <Reducer R, typename T>
  static void Reduce(const ReduceKernel& k, const void* inv, const void* initv, void* outv) {
    using C = Compute<T>;
    const T* in = static_cast<const T*>(inv);
    T* out = static_cast<T*>(outv);
    const T init = *static_cast<const T*>(initv);
    for (int64_t i = 0; i < k.out_numel_; ++i) out[i] = init;
    if (k.in_numel_ == 0) return;
    const int r = k.rank_;
    const int64_t n = k.dims_[r - 1], os = k.ostr_[r - 1];
    int64_t idx[kMaxRank] = {};
    int64_t ooff = 0, ioff = 0;
    while (true) {
      if (os == 0) {
        C acc = C(out[ooff]);
        for (int64_t i = 0; i < n; ++i) acc = Combine<R, C>(acc, C(in[ioff + i]));
        out[ooff] = T(acc);
      } else {
        for (int64_t i = 0; i < n; ++i)
          out[ooff + i] = T(Combine<R, C>(C(out[ooff + i]), C(in[ioff + i])));
      }
      ioff += n;
      int d = r - 2;
      for (; d >= 0; --d) {
        if (++idx[d] < k.dims_[d]) {
          ooff += k.ostr_[d];
          break;
        }
        idx[d] = 0;
        ooff -= k.ostr_[d] * (k.dims_[d] - 1);
      }
      if (d < 0) return;
    }
  }
  Reducer reducer_ = Reducer::kAdd;
  std::unique_ptr<CpuKernel> dnnl_;
  int rank_ = 0;
  int64_t dims_[kMaxRank] = {}, ostr_[kMaxRank] = {};
  int64_t in_numel_ = 0, out_numel_ = 0;
  void (*fn_)(const ReduceKernel&, const void*, const void*, void*) = nullptr;
};

class ReduceWindowKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(2);
    op.RequireSameDTypes();
    const TensorInfo& in = op.in[0];
    const TensorInfo& out = op.out[0];
    const int r = in.rank();
    op.Require(op.in[1].rank() == 0, "init value must be a scalar");
    op.Require(out.rank() == r && r <= kMaxRank, "result rank differs from operand rank");
    window_ = op.Ints("window_dimensions");
    strides_ = op.Ints("window_strides", std::vector<int64_t>(r, 1));
    base_dil_ = op.Ints("base_dilations", std::vector<int64_t>(r, 1));
    win_dil_ = op.Ints("window_dilations", std::vector<int64_t>(r, 1));
    std::vector<int64_t> padding = op.Ints("padding", std::vector<int64_t>(2 * r, 0));
    op.Require(static_cast<int>(window_.size()) == r && static_cast<int>(strides_.size()) == r &&
                   static_cast<int>(base_dil_.size()) == r &&
                   static_cast<int>(win_dil_.size()) == r &&
                   static_cast<int>(padding.size()) == 2 * r,
               "window attributes must have rank entries (padding: 2 per dimension)");
    pad_lo_.resize(r);
    for (int d = 0; d < r; ++d) {
      op.Require(window_[d] > 0 && strides_[d] > 0 && base_dil_[d] > 0 && win_dil_[d] > 0,
                 "window sizes, strides and dilations must be positive");
      pad_lo_[d] = padding[2 * d];
      const int64_t dilated_in =
          in.dims[d] == 0 ? 0 : op.Add(op.Mul(in.dims[d] - 1, base_dil_[d]), 1);
      const int64_t padded = op.Add(op.Add(dilated_in, padding[2 * d]), padding[2 * d + 1]);
      const int64_t dilated_win = op.Add(op.Mul(window_[d] - 1, win_dil_[d]), 1);
      const int64_t expect = padded < dilated_win ? 0 : (padded - dilated_win) / strides_[d] + 1;
      op.Require(out.dims[d] == expect, "result dimension " + std::to_string(d) + " is " +
                                            std::to_string(out.dims[d]) + ", the window gives " +
                                            std::to_string(expect));
    }
    in_dims_ = in.dims;
    in_strides_ = in.Strides();
    out_dims_ = out.dims;
    out_numel_ = out.numel;
    // Windows are only walked for non-empty results, where each fits the padded input.
    window_numel_ = 1;
    if (out_numel_ > 0)
      for (int64_t w : window_) window_numel_ = op.Mul(window_numel_, w);
    std::string name = op.String("reducer");
    Reducer reducer;
    op.Require(
        ParseReducer(name, &reducer) &&
            (reducer == Reducer::kAdd || reducer == Reducer::kMax || reducer == Reducer::kMin),
        "reducer '" + name + "' is not add, max or min");
    DispatchType(in.dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, Bool8>) {
        if (reducer == Reducer::kAdd) fn_ = &Window<Reducer::kAdd, T>;
        if (reducer == Reducer::kMax) fn_ = &Window<Reducer::kMax, T>;
        if (reducer == Reducer::kMin) fn_ = &Window<Reducer::kMin, T>;
      }
    });
    if (!fn_) throw UnsupportedError("reduce_window: not defined for i1");
    dnnl_ = MakeDnnlPooling(op);
    identity_ = reducer == Reducer::kMax ? -INFINITY : 0.f;
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    return GuardedInstance(*this, dnnl_, identity_);
  }
  void Run(void* const* b) override { fn_(*this, b[0], b[1], b[2]); }

 private:
  template <Reducer R, typename T>
  static void Window(const ReduceWindowKernel& k, const void* inv, const void* initv, void* outv) {
    using C = Compute<T>;
    const T* in = static_cast<const T*>(inv);
    T* out = static_cast<T*>(outv);
    const C init = C(*static_cast<const T*>(initv));
    const int r = static_cast<int>(k.in_dims_.size());
    int64_t o_idx[kMaxRank] = {};
    for (int64_t o = 0; o < k.out_numel_; ++o) {
      C acc = init;
      int64_t w_idx[kMaxRank] = {};
      for (int64_t w = 0; w < k.window_numel_; ++w) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < r && inside; ++d) {
          int64_t pos = o_idx[d] * k.strides_[d] + w_idx[d] * k.win_dil_[d] - k.pad_lo_[d];
          if (pos < 0 || pos % k.base_dil_[d] != 0) inside = false;
          pos /= k.base_dil_[d];
          if (pos >= k.in_dims_[d]) inside = false;
          off += pos * k.in_strides_[d];
        }
        if (inside) acc = Combine<R, C>(acc, C(in[off]));
        for (int d = r - 1; d >= 0; --d) {
          if (++w_idx[d] < k.window_[d]) break;
          w_idx[d] = 0;
        }
      }
      out[o] = T(acc);
      for (int d = r - 1; d >= 0; --d) {
        if (++o_idx[d] < k.out_dims_[d]) break;
        o_idx[d] = 0;
      }
    }
  }
  std::vector<int64_t> window_, strides_, base_dil_, win_dil_, pad_lo_, in_dims_, in_strides_,
      out_dims_;
  int64_t out_numel_ = 0, window_numel_ = 1;
  std::unique_ptr<CpuKernel> dnnl_;
  float identity_ = 0;
  void (*fn_)(const ReduceWindowKernel&, const void*, const void*, void*) = nullptr;
};

}  // namespace

void RegisterReductions(std::vector<KernelDef>& defs) {
  defs.push_back({"reduce",
                  {BRT_DTYPE_F32, BRT_DTYPE_F64, BRT_DTYPE_I1, BRT_DTYPE_I8, BRT_DTYPE_I32,
                   BRT_DTYPE_I64, BRT_DTYPE_U8},
                  false,
                  &Make<ReduceKernel>});
  defs.push_back(
      {"reduce_window",
       {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64, BRT_DTYPE_I32, BRT_DTYPE_I64},
       false,
       &Make<ReduceWindowKernel>});
}

}  // namespace brt::cpu

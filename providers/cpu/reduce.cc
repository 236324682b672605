// reduce (one operand, one init value), reduce_window and select_and_scatter.
#include <algorithm>
#include <atomic>
#include <type_traits>

#include "fused_blocks.h"  // UseAvx2
#include "kernel.h"
#include "ops/op_plans.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

// oneDNN reductions and pooling have no init operand: they compute as if it
// were the reducer's identity. A request runs oneDNN when the init value
// (read per request) is that identity, and brt's loop otherwise.
std::unique_ptr<Runnable> GuardedInstance(const CpuKernel& loop,
                                          const std::unique_ptr<CpuKernel>& dnnl, float identity) {
  return DnnlUnless(loop, dnnl, [identity](void* const* b) {
    return *static_cast<const float*>(b[1]) != identity;
  });
}

// acc combined with a row of n values, in kLanes independent accumulators
// from two rounds of them on: the loop vectorizes, and no chain of dependent
// adds sets its pace. Floats are summed in another order than one by one
// (StableHLO leaves the order open; XLA's CPU reductions do the same).
template <Reducer R, typename C, typename T>
C CombineRow(C acc, const T* in, int64_t n) {
  constexpr int64_t kLanes = 8;
  if (n < 2 * kLanes) {
    for (int64_t i = 0; i < n; ++i) acc = Combine<R, C>(acc, C(in[i]));
    return acc;
  }
  C lanes[kLanes];
  for (int64_t j = 0; j < kLanes; ++j) lanes[j] = C(in[j]);
  int64_t i = kLanes;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] = Combine<R, C>(lanes[j], C(in[i + j]));
  for (; i < n; ++i) acc = Combine<R, C>(acc, C(in[i]));
  for (int64_t j = 0; j < kLanes; ++j) acc = Combine<R, C>(acc, lanes[j]);
  return acc;
}

// Reductions over this many elements or more are split over the Session's
// threads where the layout is rows or columns; below, a fork costs more
// than it saves.
constexpr int64_t kParallelElements = int64_t{1} << 16;

// Whether p reduces contiguous rows (each result one row), or columns (each
// result one column of row-major rows).
bool IsRows(const ReducePlan& p) { return p.rank == 2 && p.ostr[0] == 1 && p.ostr[1] == 0; }
bool IsColumns(const ReducePlan& p) { return p.rank == 2 && p.ostr[0] == 0 && p.ostr[1] == 1; }

// The reduction of ReducePlan p into out (p.out_numel values of A, the
// accumulator type: T itself, or float for f16/bf16, which round once at the
// end instead of at every step).
template <Reducer R, typename T, typename A>
void ReduceInto(const ReducePlan& p, const T* in, A init, A* out) {
  using C = Compute<T>;
  for (int64_t i = 0; i < p.out_numel; ++i) out[i] = init;
  if (p.in_numel == 0) return;
  const int r = p.rank;
  const int64_t n = p.dims[r - 1], os = p.ostr[r - 1];
  const bool parallel = p.in_numel >= kParallelElements;
  if (IsRows(p)) {
    // Rows (a softmax's sums over [8, 8, 128, 128] ran at 3.5 GB/s on one
    // thread, and oneDNN's): threads take rows.
    const int64_t grain = parallel ? std::max<int64_t>(1, kParallelElements / 4 / n) : p.dims[0];
    ParallelFor(p.dims[0], grain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = A(CombineRow<R, C>(C(out[i]), in + i * n, n));
    });
    return;
  }
  if (IsColumns(p)) {
    // Columns (a bias gradient over batch x sequence): threads take blocks
    // of 64 columns, each summed down the rows in order.
    constexpr int64_t kColumns = 64;
    const int64_t blocks = (n + kColumns - 1) / kColumns;
    ParallelFor(blocks, parallel ? 1 : blocks, [&](int64_t begin, int64_t end) {
      for (int64_t c0 = begin * kColumns; c0 < std::min(n, end * kColumns); c0 += kColumns) {
        const int64_t c1 = std::min(n, c0 + kColumns);
        for (int64_t i = 0; i < p.dims[0]; ++i)
          for (int64_t j = c0; j < c1; ++j) out[j] = A(Combine<R, C>(C(out[j]), C(in[i * n + j])));
      }
    });
    return;
  }
  int64_t idx[kMaxRank] = {};
  int64_t ooff = 0, ioff = 0;
  while (true) {
    if (os == 0) {
      out[ooff] = A(CombineRow<R, C>(C(out[ooff]), in + ioff, n));
    } else {
      for (int64_t i = 0; i < n; ++i)
        out[ooff + i] = A(Combine<R, C>(C(out[ooff + i]), C(in[ioff + i])));
    }
    ioff += n;
    int d = r - 2;
    for (; d >= 0; --d) {
      if (++idx[d] < p.dims[d]) {
        ooff += p.ostr[d];
        break;
      }
      idx[d] = 0;
      ooff -= p.ostr[d] * (p.dims[d] - 1);
    }
    if (d < 0) return;
  }
}

// Collapsed layout: alternating runs of kept/reduced dimensions.
class ReduceKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanReduce(op);
    const TensorInfo& in = op.in[0];
    DispatchTypeOrComplex(in.dtype, [&](auto t) {
      using T = decltype(t);
      wide_ = kIs16BitFloat<T>;
      WithReducer(p_.reducer, [&](auto r) { fn_ = &Reduce<decltype(r)::value, T>; });
    });
    // Rows run faster on the loop below than on oneDNN 3.2's reduction (a
    // softmax's sums over [8, 8, 128, 128]: 0.09 ms against 0.65).
    if (!IsRows(p_)) dnnl_ = MakeDnnlReduction(op);
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    if (wide_) return std::make_unique<WideInstance>(*this);
    return GuardedInstance(*this, dnnl_, 0.f);
  }
  void Run(void* const* b) override { fn_(*this, b[0], b[1], b[2], nullptr); }

 private:
  // f16/bf16: accumulates in this request's floats.
  class WideInstance final : public Runnable {
   public:
    explicit WideInstance(const ReduceKernel& k) : k_(k), acc_(k.p_.out_numel) {}
    void Run(void* const* b) override { k_.fn_(k_, b[0], b[1], b[2], acc_.data()); }

   private:
    const ReduceKernel& k_;
    std::vector<float> acc_;
  };

  template <Reducer R, typename T>
  static void Reduce(const ReduceKernel& k, const void* inv, const void* initv, void* outv,
                     float* wide) {
    const T* in = static_cast<const T*>(inv);
    const T init = *static_cast<const T*>(initv);
    T* out = static_cast<T*>(outv);
    if constexpr (kIs16BitFloat<T>) {
      ReduceInto<R, T, float>(k.p_, in, float(init), wide);
      for (int64_t i = 0; i < k.p_.out_numel; ++i) out[i] = T(wide[i]);
    } else {
      ReduceInto<R, T, T>(k.p_, in, init, out);
    }
  }
  ReducePlan p_;
  bool wide_ = false;
  std::unique_ptr<CpuKernel> dnnl_;
  void (*fn_)(const ReduceKernel&, const void*, const void*, void*, float*) = nullptr;
};

// Whether any of in[0, n) is NaN, -inf or -0, which oneDNN's max pooling
// gets wrong (it drops NaN, gives the lowest float for -inf and may pick -0
// over +0). The masks stay in 32-bit lanes, so the loop is compares and ands
// per vector: the scan before oneDNN's max pooling over the CNN's
// [8, 32, 32, 16] took 34 us counting in 64 bits against 4.4 for the
// pooling; this took about 12 us baseline, 8 with AVX2, on one thread, before
// the -0 test, which adds about 2.5 us a pooling on two threads.
[[gnu::always_inline]] inline bool NeedsExactMaxLoop(const float* in, int64_t n) {
  int32_t ok = -1;
  for (int64_t i = 0; i < n; ++i) {
    int32_t bits;
    std::memcpy(&bits, in + i, sizeof bits);
    ok &= -static_cast<int32_t>((in[i] > -INFINITY) & (bits != INT32_MIN));
  }
  return ok == 0;
}
bool NeedsExactMaxBaseline(const float* in, int64_t n) { return NeedsExactMaxLoop(in, n); }
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
[[gnu::target("avx2")]] bool NeedsExactMaxAvx2(const float* in, int64_t n) {
  return NeedsExactMaxLoop(in, n);
}
#endif

bool NeedsExactMax(const float* in, int64_t n) {
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
  static const auto scan = UseAvx2() ? &NeedsExactMaxAvx2 : &NeedsExactMaxBaseline;
#else
  constexpr auto scan = &NeedsExactMaxBaseline;
#endif
  std::atomic<bool> found{false};
  ParallelFor(n, kParallelElements, [&](int64_t begin, int64_t end) {
    if (!found.load(std::memory_order_relaxed) && scan(in + begin, end - begin))
      found.store(true, std::memory_order_relaxed);
  });
  return found.load(std::memory_order_relaxed);
}

// One output line of a reduce_window over rows (below): the `count`
// positions along the last dim the window touches, each a row of `row`
// elements, combined with the input line's rows at window offsets 0 to
// `window` - 1 of that dim (those inside the input). The row loop vectorizes
// (max with its NaN and -0 rules as compares and blends).
struct LineWindow {
  int64_t row, count, stride, window, dilation, pad_lo, in_count, in_stride;
};
template <Reducer R, typename T>
[[gnu::always_inline]] inline void CombineLineLoop(T* __restrict out, const T* __restrict in,
                                                   const LineWindow& l) {
  for (int64_t w = 0; w < l.window; ++w)
    for (int64_t o = 0; o < l.count; ++o) {
      const int64_t pos = o * l.stride + w * l.dilation - l.pad_lo;
      if (pos < 0 || pos >= l.in_count) continue;
      T* acc = out + o * l.row;
      const T* src = in + pos * l.in_stride;
      for (int64_t i = 0; i < l.row; ++i) acc[i] = Combine<R, T>(acc[i], src[i]);
    }
}
template <Reducer R, typename T>
void CombineLineBaseline(T* out, const T* in, const LineWindow& l) {
  CombineLineLoop<R>(out, in, l);
}
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
template <Reducer R>
[[gnu::target("avx2")]] void CombineLineAvx2(float* out, const float* in, const LineWindow& l) {
  CombineLineLoop<R>(out, in, l);
}
#endif

// Trailing dims that a reduce_window leaves alone (window and stride 1, no
// padding or dilation: a channels-last pooling's features) make rows that
// each combine into one output row whole; the elements per row, 1 if none
// or if the window dilates the operand (a transposed convolution's form).
int64_t UntouchedRowLength(const ReduceWindowPlan& p, int* outer_rank) {
  *outer_rank = static_cast<int>(p.in_dims.size());
  for (int64_t dilation : p.base_dil)
    if (dilation != 1) return 1;
  int64_t row = 1;
  int d = static_cast<int>(p.in_dims.size());
  while (d > 0 && p.window[d - 1] == 1 && p.strides[d - 1] == 1 && p.pad_lo[d - 1] == 0 &&
         p.out_dims[d - 1] == p.in_dims[d - 1] && p.in_strides[d - 1] == row) {
    row *= p.in_dims[--d];
  }
  *outer_rank = d;
  return row;
}

class ReduceWindowKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanReduceWindow(op);
    const TensorInfo& in = op.in[0];
    const Reducer reducer = p_.reducer;
    // Rows of 8 or more vectorize; f16/bf16 (computed in float) and complex
    // numbers keep the element loop.
    const int64_t row = UntouchedRowLength(p_, &outer_rank_);
    DispatchTypeOrComplex(in.dtype, [&](auto t) {
      using T = decltype(t);
      WithReducer(reducer, [&](auto r) {
        constexpr Reducer R = decltype(r)::value;
        fn_ = &Window<R, T>;
        if constexpr (std::is_same_v<Compute<T>, T> && !kIsComplex<T> && R != Reducer::kLogAddExp) {
          if (row < 8 || outer_rank_ == 0 || p_.out_numel == 0) return;
          row_ = row;
          fn_ = &Rows<R, T, &CombineLineBaseline<R, T>>;
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
          if constexpr (std::is_same_v<T, float>)
            if (UseAvx2()) fn_ = &Rows<R, T, &CombineLineAvx2<R>>;
#endif
        }
      });
    });
    dnnl_ = MakeDnnlPooling(op);
    identity_ = reducer == Reducer::kMax ? -INFINITY : 0.f;
    in_numel_ = in.numel;
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    if (p_.reducer != Reducer::kMax) return GuardedInstance(*this, dnnl_, identity_);
    return DnnlUnless(*this, dnnl_, [n = in_numel_, identity = identity_](void* const* b) {
      return *static_cast<const float*>(b[1]) != identity ||
             NeedsExactMax(static_cast<const float*>(b[0]), n);
    });
  }
  void Run(void* const* b) override { fn_(*this, b[0], b[1], b[2]); }

 private:
  template <Reducer R, typename T>
  static void Window(const ReduceWindowKernel& k, const void* inv, const void* initv, void* outv) {
    using C = Compute<T>;
    const T* in = static_cast<const T*>(inv);
    T* out = static_cast<T*>(outv);
    const C init = C(*static_cast<const T*>(initv));
    const ReduceWindowPlan& p = k.p_;
    const int r = static_cast<int>(p.in_dims.size());
    int64_t o_idx[kMaxRank] = {};
    for (int64_t o = 0; o < p.out_numel; ++o) {
      C acc = init;
      int64_t w_idx[kMaxRank] = {};
      for (int64_t w = 0; w < p.window_numel; ++w) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < r && inside; ++d) {
          int64_t pos = o_idx[d] * p.strides[d] + w_idx[d] * p.win_dil[d] - p.pad_lo[d];
          if (pos < 0 || pos % p.base_dil[d] != 0) inside = false;
          pos /= p.base_dil[d];
          if (pos >= p.in_dims[d]) inside = false;
          off += pos * p.in_strides[d];
        }
        if (inside) acc = Combine<R, C>(acc, C(in[off]));
        for (int d = r - 1; d >= 0; --d) {
          if (++w_idx[d] < p.window[d]) break;
          w_idx[d] = 0;
        }
      }
      out[o] = T(acc);
      for (int d = r - 1; d >= 0; --d) {
        if (++o_idx[d] < p.out_dims[d]) break;
        o_idx[d] = 0;
      }
    }
  }
  // The window over the outer dims, for rows of row_ untouched elements:
  // each output line (every position of the last outer dim) is combined by
  // kLine once per window position over the dims before it; lines are shared
  // out between threads.
  template <Reducer R, typename T, void (*kLine)(T*, const T*, const LineWindow&)>
  static void Rows(const ReduceWindowKernel& k, const void* inv, const void* initv, void* outv) {
    const T* in = static_cast<const T*>(inv);
    T* out = static_cast<T*>(outv);
    const T init = *static_cast<const T*>(initv);
    const ReduceWindowPlan& p = k.p_;
    const int last = k.outer_rank_ - 1;
    const LineWindow line = {k.row_,          p.out_dims[last],  p.strides[last],
                             p.window[last],  p.win_dil[last],   p.pad_lo[last],
                             p.in_dims[last], p.in_strides[last]};
    const int64_t line_size = line.row * line.count, prefix_windows = p.window_numel / line.window;
    const int64_t grain = std::max<int64_t>(1, kParallelElements / (line_size * p.window_numel));
    ParallelFor(p.out_numel / line_size, grain, [&](int64_t begin, int64_t end) {
      int64_t o_idx[kMaxRank], w_idx[kMaxRank];
      for (int64_t d = last - 1, rest = begin; d >= 0; --d)
        o_idx[d] = rest % p.out_dims[d], rest /= p.out_dims[d];
      for (int64_t o = begin; o < end; ++o) {
        T* acc = out + o * line_size;
        std::fill(acc, acc + line_size, init);
        std::fill(w_idx, w_idx + last, 0);
        for (int64_t w = 0; w < prefix_windows; ++w) {
          int64_t off = 0;
          bool inside = true;
          for (int d = 0; d < last && inside; ++d) {
            const int64_t pos = o_idx[d] * p.strides[d] + w_idx[d] * p.win_dil[d] - p.pad_lo[d];
            inside = pos >= 0 && pos < p.in_dims[d];
            off += pos * p.in_strides[d];
          }
          if (inside) kLine(acc, in + off, line);
          for (int d = last - 1; d >= 0; --d) {
            if (++w_idx[d] < p.window[d]) break;
            w_idx[d] = 0;
          }
        }
        for (int d = last - 1; d >= 0; --d) {
          if (++o_idx[d] < p.out_dims[d]) break;
          o_idx[d] = 0;
        }
      }
    });
  }
  ReduceWindowPlan p_;
  std::unique_ptr<CpuKernel> dnnl_;
  float identity_ = 0;
  int64_t in_numel_ = 0, row_ = 1;
  int outer_rank_ = 0;
  void (*fn_)(const ReduceWindowKernel&, const void*, const void*, void*) = nullptr;
};

class SelectAndScatterKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanSelectAndScatter(op);
    DispatchType(op.out[0].dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, Bool8>) fn_ = &Scatter<T>;
    });
  }
  void Run(void* const* b) override { fn_(p_, b[0], b[1], b[2], b[3]); }

 private:
  template <typename T>
  static void Scatter(const SelectAndScatterPlan& p, const void* operandv, const void* sourcev,
                      const void* initv, void* outv) {
    using C = Compute<T>;
    const T* operand = static_cast<const T*>(operandv);
    const T* source = static_cast<const T*>(sourcev);
    T* out = static_cast<T*>(outv);
    const ReduceWindowPlan& w = p.windows;
    const int r = static_cast<int>(w.in_dims.size());
    int64_t operand_numel = 1;
    for (int64_t d : w.in_dims) operand_numel *= d;
    std::fill_n(out, operand_numel, *static_cast<const T*>(initv));
    int64_t o_idx[kMaxRank] = {};
    for (int64_t o = 0; o < w.out_numel; ++o) {
      int64_t picked = -1;
      C best{};
      int64_t w_idx[kMaxRank] = {};
      for (int64_t k = 0; k < w.window_numel; ++k) {
        int64_t off = 0;
        bool inside = true;
        for (int d = 0; d < r && inside; ++d) {
          const int64_t pos = o_idx[d] * w.strides[d] + w_idx[d] - w.pad_lo[d];
          inside = pos >= 0 && pos < w.in_dims[d];
          off += pos * w.in_strides[d];
        }
        if (inside) {
          const C v = C(operand[off]);
          if (picked < 0 || !ApplyCmp<C>(p.select, best, v)) picked = off, best = v;
        }
        for (int d = r - 1; d >= 0; --d) {
          if (++w_idx[d] < w.window[d]) break;
          w_idx[d] = 0;
        }
      }
      if (picked >= 0) out[picked] = T(C(out[picked]) + C(source[o]));
      for (int d = r - 1; d >= 0; --d) {
        if (++o_idx[d] < w.out_dims[d]) break;
        o_idx[d] = 0;
      }
    }
  }
  SelectAndScatterPlan p_;
  void (*fn_)(const SelectAndScatterPlan&, const void*, const void*, const void*, void*) = nullptr;
};

}  // namespace

void RegisterReductions(std::vector<KernelDef>& defs) {
  defs.push_back({"reduce", kEveryType, &Make<ReduceKernel>});
  defs.push_back({"reduce_window", kEveryType, &Make<ReduceWindowKernel>});
  defs.push_back({"select_and_scatter", kNumericTypes, &Make<SelectAndScatterKernel>});
}

}  // namespace brt::cpu

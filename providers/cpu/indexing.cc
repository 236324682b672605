// gather and scatter with StableHLO dimension numbers (batching dims are not
// supported yet), indices of any integer type. Start indices of gather are
// clamped into the operand; a scatter window that does not fit is skipped
// whole, as in XLA.
#include <algorithm>
#include <type_traits>

#include "kernel.h"
#include "ops/op_plans.h"

namespace brt::cpu {
namespace {

struct IndexVectors {
  const char* data;
  int32_t dtype;
  int64_t vector_stride;  // elements between components of one index vector
  int64_t Read(int64_t offset, int64_t k) const {
    return IndexValue(data, dtype, offset + k * vector_stride);
  }
};

// Calls f(e, operand offset, n, step) for each run of n elements of the
// iterated tensor starting at element e, whose operand elements are step
// apart from that offset. Along a last dimension that is a window dimension
// the start index stays the same, so its elements are one run (an embedding
// row); otherwise each run is one element. Start indices are clamped into the
// operand (gather), or a run whose window does not fit is skipped (scatter).
template <typename F>
void ForEachIndexed(const IndexPlan& p, const IndexVectors& iv, bool clamp, F&& f) {
  const int rank = p.rank();
  const bool window_run = rank > 0 && p.batch_strides[rank - 1] == 0;
  const int64_t run = window_run ? p.dims[rank - 1] : 1;
  const int64_t step = window_run ? p.window_strides[rank - 1] : 0;
  const int outer = window_run ? rank - 1 : rank;
  int64_t idx[kMaxRank] = {};
  const size_t nk = p.start_strides.size();
  for (int64_t e = 0; e < p.numel; e += run) {
    int64_t ioff = 0, woff = 0;
    for (int d = 0; d < outer; ++d)
      ioff += idx[d] * p.batch_strides[d], woff += idx[d] * p.window_strides[d];
    int64_t soff = 0;
    bool inside = true;
    for (size_t k = 0; k < nk && inside; ++k) {
      int64_t start = iv.Read(ioff, k);
      if (clamp)
        start = std::clamp<int64_t>(start, 0, p.start_max[k]);
      else
        inside = start >= 0 && start <= p.start_max[k];
      // An index out of range (a u64 near 2^64 too) is never multiplied.
      if (inside) soff += start * p.start_strides[k];
    }
    if (inside) f(e, soff + woff, run, step);
    for (int d = outer - 1; d >= 0; --d) {
      if (++idx[d] < p.dims[d]) break;
      idx[d] = 0;
    }
  }
}

class GatherKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanGather(op);
    es_ = brt_dtype_size(op.out[0].dtype);
  }

  void Run(void* const* b) override {
    const char* operand = static_cast<const char*>(b[0]);
    const IndexVectors iv{static_cast<const char*>(b[1]), p_.index_dtype, p_.vector_stride};
    char* out = static_cast<char*>(b[2]);
    const int64_t es = static_cast<int64_t>(es_);
    ForEachIndexed(p_, iv, true, [&](int64_t e, int64_t at, int64_t n, int64_t step) {
      if (step == 1) return std::memcpy(out + e * es, operand + at * es, n * es_), void();
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(out + (e + i) * es, operand + (at + i * step) * es, es_);
    });
  }

 private:
  IndexPlan p_;
  size_t es_ = 4;
};

class ScatterKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanScatter(op);
    DispatchTypeOrComplex(op.out[0].dtype, [&](auto t) {
      using T = decltype(t);
      if (p_.replace) {
        apply_ = &Replace<T>;
        return;
      }
      // and/or are refused by PlanScatter.
      WithReducer(p_.reducer, [&](auto r) { apply_ = &Combined<decltype(r)::value, T>; });
    });
  }

  void Run(void* const* b) override {
    char* out = static_cast<char*>(b[3]);
    if (p_.operand_bytes && out != b[0]) std::memcpy(out, b[0], p_.operand_bytes);
    const IndexVectors iv{static_cast<const char*>(b[1]), p_.index_dtype, p_.vector_stride};
    const char* updates = static_cast<const char*>(b[2]);
    ForEachIndexed(p_, iv, false, [&](int64_t e, int64_t at, int64_t n, int64_t step) {
      apply_(out, at, step, updates, e, n);
    });
  }

 private:
  // Updates n elements from e into the output at `at`, `step` apart.
  template <typename T>
  static void Replace(char* outv, int64_t at, int64_t step, const char* updv, int64_t e,
                      int64_t n) {
    T* out = reinterpret_cast<T*>(outv) + at;
    const T* upd = reinterpret_cast<const T*>(updv) + e;
    for (int64_t i = 0; i < n; ++i) out[i * step] = upd[i];
  }
  // Combines each update into its element as ops::Combine does (integer sums
  // and products wrap; 16-bit floats compute in f32 and round each step).
  template <Reducer R, typename T>
  static void Combined(char* outv, int64_t at, int64_t step, const char* updv, int64_t e,
                       int64_t n) {
    using C = Compute<T>;
    T* out = reinterpret_cast<T*>(outv) + at;
    const T* upd = reinterpret_cast<const T*>(updv) + e;
    for (int64_t i = 0; i < n; ++i) {
      T& dst = out[i * step];
      dst = T(Combine<R, C>(C(dst), C(upd[i])));
    }
  }
  ScatterPlan p_;
  void (*apply_)(char*, int64_t, int64_t, const char*, int64_t, int64_t) = nullptr;
};

// brt.check_indices: fails the run at the first index out of its bound,
// else copies the operand (nothing to copy when the result is over it).
class CheckIndicesKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    CheckIndicesAttrs attrs = Decode<CheckIndicesAttrs>(op);
    bounds_ = std::move(attrs.bounds);
    what_ = std::move(attrs.what);
    const TensorInfo& in = op.in[0];
    op.Require(IsInteger(in.dtype),
               std::string("indices must be integers, got ") + DTypeName(in.dtype));
    op.Require(in.dtype == op.out[0].dtype && in.numel == op.out[0].numel,
               "the result must have the operand's dtype and size");
    op.Require(!bounds_.empty() &&
                   (bounds_.size() == 1 ||
                    (!in.dims.empty() && in.dims.back() == static_cast<int64_t>(bounds_.size()))),
               "bounds needs one entry, or one per element of the indices' last dim");
    shape_ = in.dims;
    dtype_ = in.dtype;
    numel_ = in.numel;
  }
  void Run(void* const* b) override {
    const int64_t components = static_cast<int64_t>(bounds_.size());
    for (int64_t i = 0; i < numel_; ++i) {
      const int64_t v = IndexValue(b[0], dtype_, i);
      const int64_t bound = bounds_[i % components];
      if (v < 0 || v >= bound) throw KernelError(Describe(i, bound, b[0]));
    }
    if (b[1] != b[0]) std::memcpy(b[1], b[0], static_cast<size_t>(numel_) * brt_dtype_size(dtype_));
  }

 private:
  // "index 7 (at [1, 0] of the indices) is not in [0, 5): <what>", the range of
  // valid start indices (the extent less the window, plus one).
  std::string Describe(int64_t i, int64_t bound, const void* indices) const {
    const std::string v = dtype_ == BRT_DTYPE_U64
                              ? std::to_string(static_cast<const uint64_t*>(indices)[i])
                              : std::to_string(IndexValue(indices, dtype_, i));
    std::string at;
    for (int d = static_cast<int>(shape_.size()) - 1; d >= 0; --d) {
      at = std::to_string(i % shape_[d]) + (at.empty() ? "" : ", ") + at;
      i /= shape_[d];
    }
    return "index " + v + " (at [" + at + "] of the indices) is not in [0, " +
           std::to_string(bound) + "): " + what_;
  }
  std::vector<int64_t> bounds_, shape_;
  std::string what_;
  int32_t dtype_ = BRT_DTYPE_I32;
  int64_t numel_ = 0;
};

}  // namespace

void RegisterIndexing(std::vector<KernelDef>& defs) {
  defs.push_back({"gather", kEveryType, &Make<GatherKernel>});
  defs.push_back({"scatter", kEveryType, &Make<ScatterKernel>});
  defs.push_back({"brt.check_indices", kIntTypes, &Make<CheckIndicesKernel>});
}

}  // namespace brt::cpu

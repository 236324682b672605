// gather and scatter with StableHLO dimension numbers (batching dims are not
// supported yet). Start indices of gather are clamped into the operand; a
// scatter window that does not fit is skipped whole, as in XLA.
#include <algorithm>
#include <type_traits>

#include "common/op_plans.h"
#include "kernel.h"

namespace brt::cpu {
namespace {

struct IndexVectors {
  const char* data;
  int32_t dtype;
  int64_t vector_stride;  // elements between components of one index vector
  int64_t Read(int64_t offset, int64_t k) const {
    const int64_t at = offset + k * vector_stride;
    return dtype == BRT_DTYPE_I32 ? reinterpret_cast<const int32_t*>(data)[at]
                                  : reinterpret_cast<const int64_t*>(data)[at];
  }
};

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
    int64_t idx[kMaxRank] = {};
    const int rank = p_.rank();
    const size_t nk = p_.start_strides.size();
    for (int64_t e = 0; e < p_.numel; ++e) {
      int64_t ioff = 0, woff = 0;
      for (int d = 0; d < rank; ++d)
        ioff += idx[d] * p_.batch_strides[d], woff += idx[d] * p_.window_strides[d];
      int64_t soff = 0;
      for (size_t k = 0; k < nk; ++k)
        soff += std::clamp<int64_t>(iv.Read(ioff, k), 0, p_.start_max[k]) * p_.start_strides[k];
      std::memcpy(out + e * es_, operand + (soff + woff) * static_cast<int64_t>(es_), es_);
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < p_.dims[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  IndexPlan p_;
  size_t es_ = 4;
};

class ScatterKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanScatter(op);
    DispatchType(op.out[0].dtype, [&](auto t) {
      using T = decltype(t);
      if (!p_.add) {
        apply_ = &Replace<T>;
      } else if constexpr (!std::is_same_v<T, Bool8>) {
        apply_ = &Add<T>;
      }
    });
  }

  void Run(void* const* b) override {
    char* out = static_cast<char*>(b[3]);
    if (p_.operand_bytes && out != b[0]) std::memcpy(out, b[0], p_.operand_bytes);
    const IndexVectors iv{static_cast<const char*>(b[1]), p_.index_dtype, p_.vector_stride};
    const char* updates = static_cast<const char*>(b[2]);
    int64_t idx[kMaxRank] = {};
    const int rank = p_.rank();
    const size_t nk = p_.start_strides.size();
    for (int64_t e = 0; e < p_.numel; ++e) {
      int64_t ioff = 0, woff = 0;
      for (int d = 0; d < rank; ++d)
        ioff += idx[d] * p_.batch_strides[d], woff += idx[d] * p_.window_strides[d];
      int64_t soff = 0;
      bool inside = true;
      for (size_t k = 0; k < nk && inside; ++k) {
        const int64_t s = iv.Read(ioff, k);
        inside = s >= 0 && s <= p_.start_max[k];
        soff += s * p_.start_strides[k];
      }
      if (inside) apply_(out, soff + woff, updates, e);
      for (int d = rank - 1; d >= 0; --d) {
        if (++idx[d] < p_.dims[d]) break;
        idx[d] = 0;
      }
    }
  }

 private:
  template <typename T>
  static void Replace(char* out, int64_t at, const char* upd, int64_t e) {
    reinterpret_cast<T*>(out)[at] = reinterpret_cast<const T*>(upd)[e];
  }
  template <typename T>
  static void Add(char* out, int64_t at, const char* upd, int64_t e) {
    using C = Compute<T>;
    T& dst = reinterpret_cast<T*>(out)[at];
    const C u = C(reinterpret_cast<const T*>(upd)[e]);
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;  // integer sums wrap instead of overflowing
      dst = T(static_cast<C>(static_cast<U>(C(dst)) + static_cast<U>(u)));
    } else {
      dst = T(static_cast<C>(C(dst) + u));
    }
  }
  ScatterPlan p_;
  void (*apply_)(char*, int64_t, const char*, int64_t) = nullptr;
};

}  // namespace

void RegisterIndexing(std::vector<KernelDef>& defs) {
  defs.push_back({"gather", kAllTypes, false, &Make<GatherKernel>});
  defs.push_back({"scatter", kAllTypes, false, &Make<ScatterKernel>});
}

}  // namespace brt::cpu

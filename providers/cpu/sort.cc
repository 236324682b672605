// sort (ops/op_plans.h: SortPlan): each line's key values become unsigned
// integers in the order asked for (SortKey, ops/scalar_ops.h), a permutation is stable-sorted by
// them, and every operand's line is gathered through it. Lines are shared out over the Session's
// threads.
#include <algorithm>
#include <numeric>

#include "kernel.h"
#include "ops/op_plans.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

class SortKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanSort(op);
    for (const TensorInfo& t : op.in) element_bytes_.push_back(brt_dtype_size(t.dtype));
    DispatchType(op.in[p_.key].dtype, [&](auto v) {
      using T = decltype(v);
      keys_ = [](const void* line, int64_t stride, int64_t n, bool total, uint64_t* out) {
        const T* x = static_cast<const T*>(line);
        for (int64_t j = 0; j < n; ++j)
          out[j] = SortKey(static_cast<Compute<T>>(x[j * stride]), total);
      };
    });
  }

  void Run(void* const* b) override {
    const SortPlan p = p_;
    const size_t operands = element_bytes_.size();
    const int64_t lines = p.outer * p.inner;
    // Lines by the thousands of keys: a task's scratch is made once.
    const int64_t grain =
        lines * p.size > 16384 ? std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.size)) : lines;
    ParallelFor(lines, grain, [&](int64_t begin, int64_t end) {
      std::vector<uint64_t> keys(p.size);
      std::vector<int64_t> order(p.size);
      for (int64_t line = begin; line < end; ++line) {
        const int64_t first = line / p.inner * p.size * p.inner + line % p.inner;
        keys_(static_cast<const char*>(b[p.key]) + first * element_bytes_[p.key], p.inner, p.size,
              p.total_order, keys.data());
        std::iota(order.begin(), order.end(), int64_t{0});
        if (p.descending)
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t i, int64_t j) { return keys[i] > keys[j]; });
        else
          std::stable_sort(order.begin(), order.end(),
                           [&](int64_t i, int64_t j) { return keys[i] < keys[j]; });
        for (size_t k = 0; k < operands; ++k) {
          const size_t bytes = element_bytes_[k];
          const char* in = static_cast<const char*>(b[k]) + first * bytes;
          char* out = static_cast<char*>(b[operands + k]) + first * bytes;
          for (int64_t j = 0; j < p.size; ++j)
            std::memcpy(out + j * p.inner * bytes, in + order[j] * p.inner * bytes, bytes);
        }
      }
    });
  }

 private:
  SortPlan p_;
  std::vector<size_t> element_bytes_;
  void (*keys_)(const void*, int64_t, int64_t, bool, uint64_t*) = nullptr;
};

}  // namespace

void RegisterSort(std::vector<KernelDef>& defs) {
  defs.push_back({"sort", kAllTypes, &Make<SortKernel>});
}

}  // namespace brt::cpu

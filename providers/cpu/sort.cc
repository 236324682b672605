// sort (ops/op_plans.h: SortPlan): each line's values of every key (real:
// the importer sorts complex numbers by their parts) become
// unsigned integers in the order asked for (SortKey, ops/scalar_ops.h;
// complemented for a descending key), a permutation is stable-sorted by them
// lexicographically, and every operand's line is gathered through it. Lines
// are shared out over the Session's threads.
#include <algorithm>
#include <numeric>

#include "kernel.h"
#include "ops/op_plans.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

using KeysOfLine = void (*)(const void* line, int64_t stride, int64_t n, bool total,
                            bool descending, uint64_t* out);

class SortKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanSort(op);
    for (const TensorInfo& t : op.in) element_bytes_.push_back(brt_dtype_size(t.dtype));
    for (const SortKeyOrder& key : p_.keys)
      DispatchType(op.in[key.operand].dtype, [&](auto v) {
        using T = decltype(v);
        keys_of_line_.push_back([](const void* line, int64_t stride, int64_t n, bool total,
                                   bool descending, uint64_t* out) {
          const T* x = static_cast<const T*>(line);
          for (int64_t j = 0; j < n; ++j) {
            const uint64_t key = SortKey(static_cast<Compute<T>>(x[j * stride]), total);
            out[j] = descending ? ~key : key;
          }
        });
      });
  }

  void Run(void* const* b) override {
    const SortPlan& p = p_;
    const size_t operands = element_bytes_.size(), key_count = p.keys.size();
    const int64_t lines = p.outer * p.inner;
    // Lines by the thousands of keys: a task's scratch is made once.
    const int64_t grain =
        lines * p.size > 16384 ? std::max<int64_t>(1, 4096 / std::max<int64_t>(1, p.size)) : lines;
    ParallelFor(lines, grain, [&](int64_t begin, int64_t end) {
      std::vector<uint64_t> keys(key_count * p.size);
      std::vector<int64_t> order(p.size);
      for (int64_t line = begin; line < end; ++line) {
        const int64_t first = line / p.inner * p.size * p.inner + line % p.inner;
        for (size_t k = 0; k < key_count; ++k) {
          const SortKeyOrder& key = p.keys[k];
          keys_of_line_[k](
              static_cast<const char*>(b[key.operand]) + first * element_bytes_[key.operand],
              p.inner, p.size, key.total_order, key.descending, keys.data() + k * p.size);
        }
        std::iota(order.begin(), order.end(), int64_t{0});
        std::stable_sort(order.begin(), order.end(), [&](int64_t i, int64_t j) {
          for (size_t k = 0; k < key_count; ++k) {
            const uint64_t ki = keys[k * p.size + i], kj = keys[k * p.size + j];
            if (ki != kj) return ki < kj;
          }
          return false;
        });
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
  std::vector<KeysOfLine> keys_of_line_;
};

}  // namespace

void RegisterSort(std::vector<KernelDef>& defs) {
  defs.push_back({"sort", kEveryType, &Make<SortKernel>});
}

}  // namespace brt::cpu

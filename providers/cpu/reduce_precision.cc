// reduce_precision: each float's bits rounded by ops/scalar_ops.h's
// ReducePrecisionBits, shared out over the Session's threads.
#include "kernel.h"
#include "ops/op_plans.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

class ReducePrecisionKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    p_ = PlanReducePrecision(op);
    switch (brt_dtype_size(op.in[0].dtype)) {
      case 2:
        run_ = &RunAs<uint16_t>;
        break;
      case 4:
        run_ = &RunAs<uint32_t>;
        break;
      default:
        run_ = &RunAs<uint64_t>;
        break;
    }
  }
  void Run(void* const* b) override { run_(p_, b[0], b[1]); }

 private:
  // In place when in == out: each element is read before it is written.
  template <typename UInt>
  static void RunAs(const ReducePrecisionPlan& p, const void* in, void* out) {
    const UInt* x = static_cast<const UInt*>(in);
    UInt* y = static_cast<UInt*>(out);
    ParallelFor(p.numel, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        y[i] = ReducePrecisionBits<UInt>(x[i], p.src_exponent, p.src_mantissa, p.exponent_bits,
                                         p.mantissa_bits);
    });
  }
  ReducePrecisionPlan p_;
  void (*run_)(const ReducePrecisionPlan&, const void*, void*) = nullptr;
};

}  // namespace

void RegisterReducePrecision(std::vector<KernelDef>& defs) {
  defs.push_back({"reduce_precision", kFloatTypes, &Make<ReducePrecisionKernel>});
}

}  // namespace brt::cpu

// rng_bit_generator: the Philox stream of common/philox.h, its blocks
// shared out over OpenMP's threads.
#include <omp.h>

#include "common/op_plans.h"
#include "common/philox.h"
#include "kernel.h"

namespace brt::cpu {
namespace {

class RngBitGeneratorKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override { p_ = PlanRngBitGenerator(op); }
  void Run(void* const* b) override {
    const uint64_t* state = static_cast<const uint64_t*>(b[0]);
    const RngBitGeneratorPlan p = p_;
#pragma omp parallel for schedule(static) if (p.blocks > 4096)
    for (int64_t i = 0; i < p.blocks; ++i)
      StoreRngBlock(state, p.state_size, i, p.element_bytes, p.numel, b[2]);
    StoreRngNextState(state, p.state_size, p.blocks, static_cast<uint64_t*>(b[1]));
  }

 private:
  RngBitGeneratorPlan p_;
};

}  // namespace

void RegisterRandom(std::vector<KernelDef>& defs) {
  defs.push_back({"rng_bit_generator", {BRT_DTYPE_U64}, &Make<RngBitGeneratorKernel>});
}

}  // namespace brt::cpu

// rng_bit_generator: the Philox or ThreeFry stream of ops/rng_bits.h, its
// blocks shared out over the Session's threads.
#include "kernel.h"
#include "ops/op_plans.h"
#include "ops/rng_bits.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

class RngBitGeneratorKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override { p_ = PlanRngBitGenerator(op); }
  void Run(void* const* b) override {
    const uint64_t* state = static_cast<const uint64_t*>(b[0]);
    const RngBitGeneratorPlan p = p_;
    ParallelFor(p.blocks, 4096, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) StoreRngBits(p, state, i, b[2]);
    });
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

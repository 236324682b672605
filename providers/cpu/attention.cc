// brt.attention (attention.h): attention.inc for the baseline ISA, and the
// kernel, which runs the AVX2 build where the CPU has it (UseAvx2()).
#define BRT_FUSED_ISA baseline
#include "attention.inc"
#include "fused_blocks.h"  // UseAvx2

namespace brt::cpu {
namespace {

class AttentionKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    plan_ = PlanAttention(op);
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
    if (UseAvx2()) run_ = &avx2::RunAttention;
#endif
  }
  void Run(void* const* b) override {
    const int result = plan_.has_mask ? 4 : 3;
    run_(plan_, static_cast<const float*>(b[0]), static_cast<const float*>(b[1]),
         static_cast<const float*>(b[2]),
         plan_.has_mask ? static_cast<const float*>(b[3]) : nullptr,
         static_cast<float*>(b[result]));
  }

 private:
  AttentionPlan plan_;
  decltype(&baseline::RunAttention) run_ = &baseline::RunAttention;
};

}  // namespace

void RegisterAttention(std::vector<KernelDef>& defs) {
  defs.push_back({"brt.attention", {BRT_DTYPE_F32}, &Make<AttentionKernel>});
}

}  // namespace brt::cpu

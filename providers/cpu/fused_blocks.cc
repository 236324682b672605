// fused_blocks.inc for the baseline ISA, and the choice between it and the
// AVX2 set (fused_blocks_avx2.cc) by what the CPU has.
#include <cstdlib>
#include <cstring>

#define BRT_FUSED_ISA baseline
#define BRT_FUSED_ISA_NAME "baseline"
#include "fused_blocks.inc"

namespace brt::cpu {

#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
namespace avx2 {
const FusedBlockSet& Blocks();
}
#endif

const FusedBlockSet& FusedBlocks() {
  static const FusedBlockSet& kChosen = []() -> const FusedBlockSet& {
    const char* isa = std::getenv("BRT_CPU_ISA");
    if (isa && std::strcmp(isa, "baseline") == 0) return baseline::Blocks();
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return avx2::Blocks();
#endif
    return baseline::Blocks();
  }();
  return kChosen;
}

}  // namespace brt::cpu

// fused_blocks.inc for the baseline ISA, and the choice between it and the
// AVX2 set (fused_blocks_avx2.cc) by what the CPU has, which the packed GEMM
// follows too.
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

bool UseAvx2() {
  static const bool kUse = [] {
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
    const char* isa = std::getenv("BRT_CPU_ISA");
    return !(isa && std::strcmp(isa, "baseline") == 0) && __builtin_cpu_supports("avx2") &&
           __builtin_cpu_supports("fma");
#else
    return false;
#endif
  }();
  return kUse;
}

const FusedBlockSet& FusedBlocks() {
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
  if (UseAvx2()) return avx2::Blocks();
#endif
  return baseline::Blocks();
}

}  // namespace brt::cpu

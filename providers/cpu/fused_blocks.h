// The instructions of brt.fused_elementwise's interpreter: loops over blocks
// of floats (registers), plus the loads and stores that convert operands and
// results. fused_blocks.inc is compiled twice, for the baseline x86-64 ISA
// and for AVX2+FMA, and FusedBlocks() picks one by what the CPU has.
#pragma once

#include <cstdint>
#include <string>

namespace brt::cpu {

using BlockFn = void (*)(float* d, const float* a, const float* b, const float* c, int64_t n);
using LoadFn = void (*)(const void* src, int64_t stride, float* dst, int64_t n);
using StoreFn = void (*)(const float* src, void* dst, int64_t n);

struct FusedOpEntry {
  const char* name;
  int arity;
  BlockFn fn;
};

struct FusedBlockSet {
  const char* isa;  // "avx2" or "baseline"
  // The float-valued ops of a fused program: the unary and binary ops defined
  // for floats, comparisons (1 or 0), select and clamp; nullptr if unknown.
  const FusedOpEntry* (*find)(const std::string& name);
  LoadFn (*load)(int32_t dtype);    // any brt dtype
  StoreFn (*store)(int32_t dtype);  // f32, f16, bf16; nullptr otherwise
};

// Whether brt's own AVX2+FMA code runs: built for x86-64, the CPU has both,
// and the environment does not say BRT_CPU_ISA=baseline (to compare, or to
// test both). Read once.
bool UseAvx2();

// The set for this CPU: AVX2+FMA where UseAvx2(), else the baseline one.
const FusedBlockSet& FusedBlocks();

}  // namespace brt::cpu

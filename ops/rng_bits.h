// rng_bit_generator's bits (op_plans.h: RngBitGeneratorPlan), as XLA computes
// them: Philox4x32-10 (philox.h) for DEFAULT and PHILOX, Threefry2x32-20
// (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011)
// for THREE_FRY. Shared by the CPU provider's loop and the CUDA provider's
// kernel so both give the same bits.
#pragma once

#include <cstdint>

#include "ops/op_plans.h"
#include "ops/philox.h"

namespace brt::ops {

BRT_HD inline uint32_t RotateLeft(uint32_t v, int distance) {
  return (v << distance) | (v >> (32 - distance));
}

// Threefry2x32 with 20 rounds of x under the key (k0, k1).
BRT_HD inline void ThreeFry2x32(uint32_t k0, uint32_t k1, uint32_t x[2]) {
  constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x[0] += ks[0];
  x[1] += ks[1];
  for (uint32_t injection = 1; injection <= 5; ++injection) {
    for (int r : kRotations[(injection - 1) % 2]) {
      x[0] += x[1];
      x[1] = RotateLeft(x[1], r) ^ x[0];
    }
    x[0] += ks[injection % 3];
    x[1] += ks[(injection + 1) % 3] + injection;
  }
}

// Block i of the THREE_FRY stream, stored as the elements it makes.
BRT_HD inline void StoreThreeFryBlock(const RngBitGeneratorPlan& p, const uint64_t* state,
                                      int64_t i, void* bits) {
  const uint64_t counter = state[1] + static_cast<uint64_t>(i);
  uint32_t x[2] = {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32)};
  ThreeFry2x32(static_cast<uint32_t>(state[0]), static_cast<uint32_t>(state[0] >> 32), x);
  if (p.element_bytes == 8) {
    static_cast<uint64_t*>(bits)[i] = x[0] | uint64_t{x[1]} << 32;
    return;
  }
  const int64_t half = (p.split + 1) / 2, c = i % p.inner, pair = i / p.inner % half,
                outer = i / p.inner / half;
  for (int64_t k = 0; k < 2 && 2 * pair + k < p.split; ++k)
    StoreRngWord(x[k], p.element_bytes, (outer * p.split + 2 * pair + k) * p.inner + c, bits);
}

// Block i of the stream the plan names.
BRT_HD inline void StoreRngBits(const RngBitGeneratorPlan& p, const uint64_t* state, int64_t i,
                                void* bits) {
  if (p.three_fry)
    StoreThreeFryBlock(p, state, i, bits);
  else
    StoreRngBlock(state, p.state_size, i, p.element_bytes, p.numel, bits);
}

}  // namespace brt::ops

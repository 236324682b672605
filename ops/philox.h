// rng_bit_generator's Philox4x32-10 stream (op_plans.h: RngBitGeneratorPlan),
// as XLA computes it for algorithm DEFAULT and PHILOX, shared by the CPU
// provider's loop and the CUDA provider's kernel so both give the same bits.
#pragma once

#include <cstdint>

#include "ops/scalar_ops.h"  // BRT_HD

namespace brt::ops {

// The counter's low and high words in a u64[2] or u64[3] state: the key is
// the high word of a u64[2] state.
BRT_HD inline uint64_t RngCounterHigh(const uint64_t* state, int64_t state_size) {
  return state[state_size == 3 ? 2 : 0];
}

// Element e of 8, 16 or 32 bits: the low bits of a 32-bit word, as XLA
// converts its u32 bits to narrower types.
BRT_HD inline void StoreRngWord(uint32_t word, int element_bytes, int64_t e, void* bits) {
  if (element_bytes == 4)
    static_cast<uint32_t*>(bits)[e] = word;
  else if (element_bytes == 2)
    static_cast<uint16_t*>(bits)[e] = static_cast<uint16_t>(word);
  else
    static_cast<uint8_t*>(bits)[e] = static_cast<uint8_t>(word);
}

// Block i of the stream: Philox of counter + i under the state's key, stored
// as the elements it holds (4 of 8, 16 or 32 bits, 2 of 64 bits; those past
// numel are dropped).
BRT_HD inline void StoreRngBlock(const uint64_t* state, int64_t state_size, int64_t i,
                                 int element_bytes, int64_t numel, void* bits) {
  const uint64_t low = state[1], lo = low + static_cast<uint64_t>(i);
  const uint64_t hi = RngCounterHigh(state, state_size) + (lo < low ? 1 : 0);
  uint32_t k0 = static_cast<uint32_t>(state[0]), k1 = static_cast<uint32_t>(state[0] >> 32);
  uint32_t x[4] = {static_cast<uint32_t>(lo), static_cast<uint32_t>(lo >> 32),
                   static_cast<uint32_t>(hi), static_cast<uint32_t>(hi >> 32)};
  for (int round = 0; round < 10; ++round, k0 += 0x9E3779B9u, k1 += 0xBB67AE85u) {
    const uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u, p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    const uint32_t x1 = x[1], x3 = x[3];
    x[0] = static_cast<uint32_t>(p1 >> 32) ^ x1 ^ k0, x[1] = static_cast<uint32_t>(p1);
    x[2] = static_cast<uint32_t>(p0 >> 32) ^ x3 ^ k1, x[3] = static_cast<uint32_t>(p0);
  }
  if (element_bytes == 8) {
    for (int64_t j = 0; j < 2 && 2 * i + j < numel; ++j)
      static_cast<uint64_t*>(bits)[2 * i + j] = x[2 * j] | uint64_t{x[2 * j + 1]} << 32;
    return;
  }
  for (int64_t j = 0; j < 4 && 4 * i + j < numel; ++j)
    StoreRngWord(x[j], element_bytes, 4 * i + j, bits);
}

// The new state: the key, the counter advanced by `blocks` (its high word
// kept only in a u64[3] state, as XLA does). next may be state itself.
BRT_HD inline void StoreRngNextState(const uint64_t* state, int64_t state_size, int64_t blocks,
                                     uint64_t* next) {
  const uint64_t key = state[0], low = state[1], high = RngCounterHigh(state, state_size);
  const uint64_t new_low = low + static_cast<uint64_t>(blocks);
  next[0] = key, next[1] = new_low;
  if (state_size == 3) next[2] = high + (new_low < low ? 1 : 0);
}

}  // namespace brt::ops

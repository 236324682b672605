// The op registry's facts as the loader checks them: arity and required
// attributes of every kind in brt/ops.def. The compiler's verifier and plugin
// authors read the same table. A kind not listed here is a plugin's own: it
// loads only when a loaded provider lists it in its kernel table.
#pragma once

#include <cstdint>
#include <string_view>

#include "brt/provider_abi.h"

namespace brt {

struct RequiredAttr {
  const char* name;
  int32_t kind;  // BRT_ATTR_*
};

// The flag words of ops.def rows.
namespace op_flags {
inline constexpr unsigned kStableHlo = 1;          // imported from the StableHLO op of this name
inline constexpr unsigned kCuda = 2;               // runs on CUDA devices
inline constexpr unsigned kCollective = 4;         // exchanges data between ranks (a communicator)
inline constexpr unsigned kChlo = 8;               // imported from the CHLO op of this name
inline constexpr unsigned kTwoResults = 16;        // two results (else one): rng_bit_generator's
inline constexpr unsigned kResultPerOperand = 32;  // one result per operand: sort's
}  // namespace op_flags

struct OpSchema {
  const char* kind;
  unsigned flags;  // op_flags::*
  int min_operands;
  int max_operands;       // -1: no limit
  int num_results;        // -1: one per operand
  RequiredAttr attrs[6];  // terminated by a null name
  int ResultsFor(int operands) const { return num_results < 0 ? operands : num_results; }
};

// nullptr for a kind the registry does not have.
const OpSchema* FindOpSchema(std::string_view kind);

}  // namespace brt

// The op registry's facts as the loader checks them: arity and typed
// attributes of every kind in brt/ops.def. The compiler's verifier and plugin
// authors read the same table. A kind not listed here is a plugin's own: it
// loads only when a loaded provider lists it in its kernel table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "brt/provider_abi.h"

namespace brt {

// One attribute of a kind: a BRT_REQUIRED, BRT_OPTIONAL or BRT_DEFAULT entry
// of its ops.def row.
struct AttrSchema {
  const char* name;
  int32_t kind;   // BRT_ATTR_*
  bool required;  // else it may be absent
};

// The attribute types of ops.def's entries, as ABI attribute kinds.
namespace attr_types {
inline constexpr int32_t Int = BRT_ATTR_INT;
inline constexpr int32_t Ints = BRT_ATTR_INTS;
inline constexpr int32_t Float = BRT_ATTR_FLOAT;
inline constexpr int32_t Floats = BRT_ATTR_FLOATS;
inline constexpr int32_t String = BRT_ATTR_STRING;
inline constexpr int32_t Bytes = BRT_ATTR_BYTES;
}  // namespace attr_types

// "an integer", "an i64 array", ... for messages.
inline const char* AttrKindName(int32_t kind) {
  switch (kind) {
    case BRT_ATTR_INT:
      return "an integer";
    case BRT_ATTR_FLOAT:
      return "a float";
    case BRT_ATTR_INTS:
      return "an i64 array";
    case BRT_ATTR_FLOATS:
      return "an f64 array";
    case BRT_ATTR_STRING:
      return "a string";
    case BRT_ATTR_BYTES:
      return "bytes (dense elements)";
  }
  return "an unknown kind";
}

// The flag words of ops.def rows.
namespace op_flags {
inline constexpr unsigned kStableHlo = 1;  // imported from the StableHLO op of this name
// 2 was kCuda: which devices run a kind is the providers' kernel tables' to say.
inline constexpr unsigned kCollective = 4;         // exchanges data between ranks (a communicator)
inline constexpr unsigned kChlo = 8;               // imported from the CHLO op of this name
inline constexpr unsigned kTwoResults = 16;        // two results (else one): rng_bit_generator's
inline constexpr unsigned kResultPerOperand = 32;  // one result per operand: sort's
// The result may be written over an operand (the memory planner's choice,
// see InPlaceOperand): kernels must give the right result when the result's
// pointer equals that operand's.
// kInPlace: over any operand of the result's dtype and size; the kernel reads
// each element before writing it (elementwise ops: every BRT_UNARY and
// BRT_BINARY row has it).
inline constexpr unsigned kInPlace = 64;
// kInPlaceFirstOperand: over the first operand only; the kernel skips
// copying it onto itself and writes the rest (scatter, dynamic_update_slice).
inline constexpr unsigned kInPlaceFirstOperand = 128;
inline constexpr unsigned kAnyResults = 256;  // any count: while's and case's, set by their regions
inline constexpr unsigned kThreeResults = 512;  // three results: eigh's
inline constexpr unsigned kFourResults = 1024;  // four results: svd's and eig's
}  // namespace op_flags

struct OpSchema {
  const char* kind;
  unsigned flags;  // op_flags::*
  int min_operands;
  int max_operands;         // -1: no limit
  int num_results;          // -1: one per operand; -2: any count
  const AttrSchema* attrs;  // every attribute a layer reads, terminated by a null name
  bool TakesResults(int operands, int results) const {
    return num_results == -2 || results == (num_results == -1 ? operands : num_results);
  }
  // What TakesResults expects, for messages: "2", or "any number".
  std::string ResultsText(int operands) const {
    return num_results == -2 ? "any number"
                             : std::to_string(num_results == -1 ? operands : num_results);
  }
  // nullptr for an attribute the registry does not list for this kind.
  const AttrSchema* FindAttr(std::string_view name) const {
    for (const AttrSchema* a = attrs; a->name; ++a)
      if (name == a->name) return a;
    return nullptr;
  }
};

// nullptr for a kind the registry does not have.
const OpSchema* FindOpSchema(std::string_view kind);

// The index of the operand an op of these flags may write its result over,
// or -1: one that `fits` (the result's dtype and size), that no later op
// reads (`dead_after`), and that the op reads through no other operand:
// `bytes_of` names the memory an operand is (values sharing bytes give the
// same name). The runtime's memory planner and the compiler's in-place state
// updates ask the same question.
template <typename Operands, typename BytesOf, typename Fits, typename DeadAfter>
int InPlaceOperand(unsigned flags, const Operands& operands, BytesOf bytes_of, Fits fits,
                   DeadAfter dead_after) {
  size_t candidates = 0;
  if (flags & op_flags::kInPlace) candidates = operands.size();
  if (flags & op_flags::kInPlaceFirstOperand) candidates = std::min<size_t>(1, operands.size());
  for (size_t i = 0; i < candidates; ++i) {
    const auto& v = operands[i];
    if (!fits(v) || !dead_after(v)) continue;
    const auto bytes = bytes_of(v);
    if (std::count_if(operands.begin(), operands.end(),
                      [&](const auto& w) { return bytes_of(w) == bytes; }) == 1)
      return static_cast<int>(i);
  }
  return -1;
}

}  // namespace brt

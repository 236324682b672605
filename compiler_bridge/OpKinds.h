// The op kinds the compiler knows, made from the op registry (brt/ops.def):
// which StableHLO ops it imports, which it may fuse or check. Which device
// runs a kind is the providers' to say (the place pass asks them).
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace brt::bridge {

enum class KindClass {
  kUnary,    // elementwise, one operand
  kBinary,   // elementwise, two operands (NumPy broadcasting)
  kCompare,  // elementwise, i1 result
  kTernary,  // select, clamp
  kConvert,
  kOther,  // data movement, contraction, reduction, indexing
};

struct KindInfo {
  const char* kind;
  KindClass cls;
  bool imported;  // a StableHLO op imported under this name
  bool chlo;      // a CHLO op imported under this name
  // Unary and binary ops: the scalar expression over x (unary) or a and b
  // (binary), valid C++ and CUDA C on floats; on_float: defined on floats.
  const char* expression;
  bool on_float;
};

// nullptr for an unknown kind.
const KindInfo* FindKind(llvm::StringRef kind);
// Every kind of the registry.
llvm::ArrayRef<KindInfo> AllKinds();

// Elementwise in any form (what elementwise fusion may take).
inline bool IsElementwise(const KindInfo* k) { return k && k->cls != KindClass::kOther; }

}  // namespace brt::bridge

// Decoding of StableHLO dialect attributes. With the stablehlo dialect
// unregistered, `#stablehlo.dot<...>`, `#stablehlo<comparison_direction GT>`,
// `#stablehlo.conv<...>`, `#stablehlo.gather<...>` and `#stablehlo.scatter<...>`
// arrive as opaque attributes holding their text; this is the one place that
// reads that text.
#pragma once

#include <string>

#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace brt::bridge {

// Appends the plain attributes (i64 arrays, i64, strings) that `attr` stands
// for. Attributes that do not change what the runtime computes (precision,
// comparison type) append nothing. On failure returns false and sets `error`
// to a message quoting the attribute.
bool DecodeOpaqueAttr(mlir::OpaqueAttr attr, mlir::Builder& b,
                      llvm::SmallVectorImpl<mlir::NamedAttribute>& out, std::string* error);

}  // namespace brt::bridge

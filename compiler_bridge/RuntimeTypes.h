// MLIR element types, tensor types and dense constants in the runtime's terms
// (brt::DType, brt::TensorType, row-major bytes), for every pass that hands
// something to the runtime.
#pragma once

#include <cstdint>
#include <vector>

#include "brt/builder.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Types.h"

namespace brt::bridge {

// kInvalid for an element type the runtime has no dtype for.
DType ToDType(mlir::Type element);

// A ranked tensor type's dtype and dims: static sizes, or symbolic ones
// (SymbolicDims.h) as their expressions' text.
TensorType ToTensorType(mlir::Type tensor);

// A ranked tensor type's bytes in the runtime (i1: one byte per element).
int64_t ByteSize(mlir::Type tensor);

// Dense elements as the runtime's bytes: row-major, i1 one byte per element.
std::vector<uint8_t> ElementBytes(mlir::DenseElementsAttr dense);

// A constant's bytes from dense elements or a dense_resource blob; the error
// names `where` (the op's location) and what is missing.
Expected<std::vector<uint8_t>> ConstantBytes(mlir::Attribute value, const std::string& where);

}  // namespace brt::bridge

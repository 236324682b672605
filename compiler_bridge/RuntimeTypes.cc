#include "RuntimeTypes.h"

#include "SymbolicDims.h"

#include <algorithm>
#include <cstring>

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace brt::bridge {

DType ToDType(mlir::Type e) {
  if (e.isF32()) return DType::kF32;
  if (e.isF16()) return DType::kF16;
  if (e.isBF16()) return DType::kBF16;
  if (e.isF64()) return DType::kF64;
  if (e.isInteger(1)) return DType::kI1;
  if (e.isUnsignedInteger(8)) return DType::kU8;
  if (e.isUnsignedInteger(16)) return DType::kU16;
  if (e.isUnsignedInteger(32)) return DType::kU32;
  if (e.isUnsignedInteger(64)) return DType::kU64;
  if (e.isSignlessInteger(8)) return DType::kI8;
  if (e.isSignlessInteger(16)) return DType::kI16;
  if (e.isSignlessInteger(32)) return DType::kI32;
  if (e.isSignlessInteger(64)) return DType::kI64;
  if (auto complex = mlir::dyn_cast<mlir::ComplexType>(e)) {
    if (complex.getElementType().isF32()) return DType::kC64;
    if (complex.getElementType().isF64()) return DType::kC128;
  }
  return DType::kInvalid;
}

// A complex element is its two parts, real first.
static int64_t ElementBytesWidth(mlir::Type e) {
  if (auto complex = mlir::dyn_cast<mlir::ComplexType>(e))
    return 2 * ElementBytesWidth(complex.getElementType());
  return std::max<int64_t>(e.getIntOrFloatBitWidth() / 8, 1);
}

TensorType ToTensorType(mlir::Type t) {
  auto r = mlir::cast<mlir::RankedTensorType>(t);
  TensorType out{ToDType(r.getElementType()), {}};
  std::optional<llvm::SmallVector<SymDim>> symbolic = SymbolicShape(r);
  for (auto [i, d] : llvm::enumerate(r.getShape())) {
    if (mlir::ShapedType::isDynamic(d) && symbolic)
      out.dims.emplace_back((*symbolic)[i].Text());
    else
      out.dims.emplace_back(d);
  }
  return out;
}

int64_t ByteSize(mlir::Type tensor) {
  auto t = mlir::cast<mlir::RankedTensorType>(tensor);
  return t.getNumElements() * ElementBytesWidth(t.getElementType());
}

std::vector<uint8_t> ElementBytes(mlir::DenseElementsAttr dense) {
  auto type = mlir::cast<mlir::RankedTensorType>(dense.getType());
  const int64_t n = type.getNumElements();
  const mlir::Type e = type.getElementType();
  std::vector<uint8_t> out;
  if (e.isInteger(1)) {
    for (bool v : dense.getValues<bool>()) out.push_back(v ? 1 : 0);
    return out;
  }
  const size_t width = static_cast<size_t>(ElementBytesWidth(e));
  out.resize(static_cast<size_t>(n) * width);
  llvm::ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < n; ++i) std::memcpy(out.data() + i * width, raw.data(), width);
  } else {
    std::memcpy(out.data(), raw.data(), out.size());
  }
  return out;
}

// A constant's bytes from dense elements or a dense_resource blob (whose
// 8-byte alignment header MLIR has already stripped).
Expected<std::vector<uint8_t>> ConstantBytes(mlir::Attribute value, const std::string& where) {
  if (auto dense = mlir::dyn_cast_or_null<mlir::DenseElementsAttr>(value))
    return ElementBytes(dense);
  auto resource = mlir::dyn_cast_or_null<mlir::DenseResourceElementsAttr>(value);
  if (!resource) return Status(StatusCode::kInvalidArgument, where + ": constant without a value");
  mlir::AsmResourceBlob* blob = resource.getRawHandle().getBlob();
  const size_t expected = static_cast<size_t>(ByteSize(resource.getType()));
  if (!blob)
    return Status(StatusCode::kInvalidArgument,
                  where + ": the data of dense_resource constant '" +
                      resource.getRawHandle().getKey().str() +
                      "' is missing (elided when printed? export with large_elements_limit=None)");
  llvm::ArrayRef<char> data = blob->getData();
  if (data.size() != expected)
    return Status(StatusCode::kInvalidArgument,
                  where + ": dense_resource constant holds " + std::to_string(data.size()) +
                      " bytes, its type needs " + std::to_string(expected));
  return std::vector<uint8_t>(data.begin(), data.end());
}

}  // namespace brt::bridge

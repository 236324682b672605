// Ops on element types their kernels do not take, imported on types they
// do, with the same results (see Importer.h): clamp on i1, dot_general on i1
// and integer dot_general accumulating in a wider type.
#include "import/Importer.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

namespace {

mlir::Type ElementOf(Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

mlir::RankedTensorType WithElement(Value v, mlir::Type element) {
  return mlir::RankedTensorType::get(mlir::cast<mlir::RankedTensorType>(v.getType()).getShape(),
                                     element);
}

}  // namespace

// clamp(min, x, max) is min(max(x, min), max); on i1, max is or and min is
// and: (x | min) & max.
bool Importer::ImportClamp(Operation& op, llvm::ArrayRef<Value> operands,
                           llvm::DenseMap<Value, Value>& map, int) {
  if (operands.size() != 3 || op.getNumResults() != 1 || !CheckType(op.getResult(0).getType(), op))
    return Fail(op, "stablehlo.clamp needs three operands and one result");
  const mlir::Type type = op.getResult(0).getType();
  if (!ElementOf(operands[1]).isInteger(1)) {
    map[op.getResult(0)] = Emit(op.getLoc(), type, "clamp", operands);
    return true;
  }
  Value at_least = Emit(op.getLoc(), type, "or", {operands[1], operands[0]});
  map[op.getResult(0)] = Emit(op.getLoc(), type, "and", {at_least, operands[2]});
  return true;
}

// dot_general of i1 is the or of ands: the i32 count of true products, != 0.
// Integer operands narrower than an integer result (i8 x i8 -> i32) are
// converted to it first: their products and sums wrap in the result's type
// as XLA's do.
bool Importer::ImportDotGeneral(Operation& op, llvm::ArrayRef<Value> operands,
                                llvm::DenseMap<Value, Value>& map, int) {
  if (operands.size() != 2 || op.getNumResults() != 1 || !CheckType(op.getResult(0).getType(), op))
    return Fail(op, "stablehlo.dot_general needs two operands and one result");
  llvm::SmallVector<mlir::NamedAttribute> params;
  if (!Params(op, params)) return false;
  const mlir::Location loc = op.getLoc();
  const Value result = op.getResult(0);
  const mlir::Type element = ElementOf(result);
  auto dot = [&](Value lhs, Value rhs, mlir::Type type) {
    return CreateOp(b_, loc, "dot_general", mlir::TypeRange{type}, mlir::ValueRange{lhs, rhs},
                    params)
        ->getResult(0);
  };
  auto widened = [&](Value v, mlir::Type to) {
    return ElementOf(v) == to ? v : Emit(loc, WithElement(v, to), "convert", v);
  };
  const bool integers = mlir::isa<mlir::IntegerType>(ElementOf(operands[0])) &&
                        mlir::isa<mlir::IntegerType>(ElementOf(operands[1])) &&
                        mlir::isa<mlir::IntegerType>(element);
  if (integers && element.isInteger(1)) {
    const mlir::Type count = b_.getI32Type();
    auto scalar = mlir::RankedTensorType::get({}, count);
    Value zero =
        Emit(loc, scalar, "constant", {},
             {b_.getNamedAttr("value", mlir::DenseElementsAttr::get(scalar, llvm::APInt(32, 0)))});
    Value counts =
        dot(widened(operands[0], count), widened(operands[1], count), WithElement(result, count));
    map[result] = Emit(loc, result.getType(), "compare", {counts, zero},
                       {b_.getNamedAttr("comparison_direction", b_.getStringAttr("NE"))});
    return true;
  }
  if (integers)
    map[result] =
        dot(widened(operands[0], element), widened(operands[1], element), result.getType());
  else
    map[result] = dot(operands[0], operands[1], result.getType());
  return true;
}

}  // namespace brt::bridge

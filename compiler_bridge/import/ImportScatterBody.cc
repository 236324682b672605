// A scatter whose body computes any elementwise function of the old value
// and the update (lax.scatter_apply, lax.scatter with its own combiner),
// where its indices are unique (see Importer.h).
#include "OpKinds.h"
#include "import/Importer.h"
#include "import/OpaqueAttrs.h"

namespace brt::bridge {

using mlir::Operation;
using mlir::Value;

namespace {

bool IsElementwise(Operation& o) {
  const llvm::StringRef name = o.getName().getStringRef();
  if (!name.starts_with("stablehlo.") || o.getNumResults() != 1) return false;
  const KindInfo* info = FindKind(name.split('.').second);
  return info && info->imported && info->cls != KindClass::kOther;
}

}  // namespace

// With unique indices each element is combined at most once, so the result
// is select(mask, body(operand, spread), operand): `mask` marks the elements
// an update reaches (a replace scatter of trues), `spread` holds each update
// at its element (a replace scatter of the updates into the operand), and
// the body's ops run on whole tensors of the operand's shape, its scalar
// constants broadcast. params: the scatter's, without a mode.
bool Importer::ImportScatterBody(Operation& op, llvm::ArrayRef<Value> operands,
                                 llvm::ArrayRef<mlir::NamedAttribute> params,
                                 llvm::DenseMap<Value, Value>& map) {
  const std::string unsupported =
      "scatter computations other than replace, add, multiply, maximum and minimum of the old "
      "value and the update, and the old value minus the update, are supported with "
      "unique_indices = true only (an elementwise body)";
  auto unique = AttrOrPropertyOf<mlir::BoolAttr>(&op, "unique_indices");
  if (!unique || !unique.getValue() || op.getNumRegions() != 1 || !op.getRegion(0).hasOneBlock() ||
      op.getRegion(0).front().getNumArguments() != 2)
    return Fail(op, unsupported);
  mlir::Block& body = op.getRegion(0).front();
  llvm::SmallVector<Operation*> computes;  // the ops before the return
  for (Operation& o : body) {
    const llvm::StringRef name = o.getName().getStringRef();
    if (name == "stablehlo.return") break;
    if (!IsElementwise(o) && name != "stablehlo.constant")
      return Fail(op, unsupported + "; this body holds " + name.str());
    computes.push_back(&o);
  }
  Operation& ret = body.back();
  if (ret.getName().getStringRef() != "stablehlo.return" || ret.getNumOperands() != 1 ||
      computes.size() + 1 != body.getOperations().size())
    return Fail(op, unsupported);
  const mlir::Location loc = op.getLoc();
  auto type = mlir::cast<mlir::RankedTensorType>(operands[0].getType());
  auto update_type = mlir::cast<mlir::RankedTensorType>(operands[2].getType());
  auto whole = [&](mlir::Type element) {
    return mlir::RankedTensorType::get(type.getShape(), element);
  };
  auto broadcast = [&](Value scalar, mlir::RankedTensorType to) {
    return Emit(loc, to, "broadcast_in_dim", scalar,
                {b_.getNamedAttr("broadcast_dimensions", b_.getDenseI64ArrayAttr({}))});
  };
  auto bool_scalar = mlir::RankedTensorType::get({}, b_.getI1Type());
  auto bool_constant = [&](bool value) {
    return Emit(loc, bool_scalar, "constant", {},
                {b_.getNamedAttr("value", mlir::DenseElementsAttr::get(bool_scalar, value))});
  };
  llvm::SmallVector<mlir::NamedAttribute> replace(params.begin(), params.end());
  replace.push_back(b_.getNamedAttr("mode", b_.getStringAttr("replace")));
  auto scatter = [&](Value into, Value updates) {
    return CreateOp(b_, loc, "scatter", mlir::TypeRange{into.getType()},
                    mlir::ValueRange{into, operands[1], updates}, replace)
        ->getResult(0);
  };
  const Value mask =
      scatter(broadcast(bool_constant(false), whole(b_.getI1Type())),
              broadcast(bool_constant(true),
                        mlir::RankedTensorType::get(update_type.getShape(), b_.getI1Type())));
  llvm::DenseMap<Value, Value> values = {{body.getArgument(0), operands[0]},
                                         {body.getArgument(1), scatter(operands[0], operands[2])}};
  for (Operation* o : computes) {
    const mlir::Type element =
        mlir::cast<mlir::RankedTensorType>(o->getResult(0).getType()).getElementType();
    llvm::SmallVector<mlir::NamedAttribute> attrs;
    if (!Params(*o, attrs)) return false;
    if (o->getName().getStringRef() == "stablehlo.constant") {
      values[o->getResult(0)] =
          broadcast(Emit(loc, o->getResult(0).getType(), "constant", {}, attrs), whole(element));
      continue;
    }
    llvm::SmallVector<Value> ins;
    for (Value v : o->getOperands()) ins.push_back(values.lookup(v));
    values[o->getResult(0)] = CreateOp(b_, loc, o->getName().getStringRef().split('.').second,
                                       mlir::TypeRange{whole(element)}, ins, attrs)
                                  ->getResult(0);
  }
  const Value combined = values.lookup(ret.getOperand(0));
  map[op.getResult(0)] = Emit(loc, type, "select", {mask, combined, operands[0]});
  return true;
}

}  // namespace brt::bridge

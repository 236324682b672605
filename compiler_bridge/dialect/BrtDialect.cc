#include "BrtDialect.h"

#include "brt/op_registry.h"

#include "BrtOpInterface.cpp.inc"
#include "BrtOpsDialect.cpp.inc"

#define GET_OP_CLASSES
#include "BrtOps.cpp.inc"

namespace brt::bridge {

void BrtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "BrtOps.cpp.inc"
      >();
}

mlir::DictionaryAttr RuntimeParams(mlir::Operation* op) {
  llvm::SmallVector<mlir::NamedAttribute> params;
  for (const mlir::NamedAttribute& a : op->getAttrs())
    if (!a.getName().getValue().contains('.')) params.push_back(a);
  return mlir::DictionaryAttr::get(op->getContext(), params);
}

mlir::LogicalResult VerifyRegistryArity(mlir::Operation* op, llvm::StringRef kind) {
  const OpSchema* schema = FindOpSchema(kind);
  const int n = static_cast<int>(op->getNumOperands());
  if (n < schema->min_operands || (schema->max_operands >= 0 && n > schema->max_operands))
    return op->emitOpError() << "takes "
                             << (schema->min_operands == schema->max_operands
                                     ? std::to_string(schema->min_operands)
                                     : "at least " + std::to_string(schema->min_operands))
                             << " operands, got " << n;
  if (!schema->TakesResults(n, static_cast<int>(op->getNumResults())))
    return op->emitOpError() << "has " << schema->ResultsText(n) << " result(s), got "
                             << op->getNumResults();
  return mlir::success();
}

mlir::LogicalResult KernelOp::verify() {
  if (FindOpSchema(getKind()))
    return emitOpError() << "'" << getKind() << "' is a kind of the op registry: write it as its "
                         << "own op, brt."
                         << getKind().str().substr(getKind().starts_with("brt.") ? 4 : 0);
  return mlir::success();
}

mlir::Operation* CreateOp(mlir::OpBuilder& b, mlir::Location loc, llvm::StringRef kind,
                          mlir::TypeRange results, mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs) {
  if (!FindOpSchema(kind))
    return KernelOp::create(b, loc, results, b.getStringAttr(kind), operands,
                            b.getDictionaryAttr(attrs));
  mlir::OperationState state(loc, "brt." + kind.substr(kind.starts_with("brt.") ? 4 : 0).str());
  state.addOperands(operands);
  state.addTypes(results);
  state.addAttributes(attrs);
  return b.create(state);
}

}  // namespace brt::bridge

#include "BrtDialect.h"

#include "brt/op_registry.h"

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

namespace {

// Whether a params entry has the attribute kind the registry asks for.
bool HasAttrKind(mlir::Attribute a, int32_t kind) {
  switch (kind) {
    case BRT_ATTR_INT:
      return mlir::isa<mlir::IntegerAttr>(a);
    case BRT_ATTR_FLOAT:
      return mlir::isa<mlir::FloatAttr>(a);
    case BRT_ATTR_INTS:
      return mlir::isa<mlir::DenseI64ArrayAttr>(a);
    case BRT_ATTR_FLOATS:
      return mlir::isa<mlir::DenseF64ArrayAttr>(a);
    case BRT_ATTR_STRING:
      return mlir::isa<mlir::StringAttr>(a);
    case BRT_ATTR_BYTES:
      return mlir::isa<mlir::ElementsAttr>(a);
  }
  return false;
}

}  // namespace

mlir::LogicalResult KernelOp::verify() {
  const OpSchema* schema = FindOpSchema(getKind());
  if (!schema) return mlir::success();
  const int n = static_cast<int>(getInputs().size());
  if (n < schema->min_operands || (schema->max_operands >= 0 && n > schema->max_operands))
    return emitOpError() << "'" << getKind() << "' takes "
                         << (schema->min_operands == schema->max_operands
                                 ? std::to_string(schema->min_operands)
                                 : "at least " + std::to_string(schema->min_operands))
                         << " operands, got " << n;
  if (static_cast<int>(getOutputs().size()) != schema->ResultsFor(n))
    return emitOpError() << "'" << getKind() << "' has " << schema->ResultsFor(n)
                         << " result(s), got " << getOutputs().size();
  for (const AttrSchema* attr = schema->attrs; attr->name; ++attr) {
    mlir::Attribute a = getParams().get(attr->name);
    if (!a && attr->required)
      return emitOpError() << "'" << getKind() << "' needs attribute '" << attr->name << "'";
    if (a && !HasAttrKind(a, attr->kind))
      return emitOpError() << "'" << getKind() << "' attribute '" << attr->name << "' must be "
                           << AttrKindName(attr->kind);
  }
  return mlir::success();
}

}  // namespace brt::bridge

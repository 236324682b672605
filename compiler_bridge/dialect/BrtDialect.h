// The brt MLIR dialect (compiler side only; the runtime never links MLIR):
// one op per kind of the op registry, generated from brt/ops.def, and
// brt.kernel for a plugin's kinds; every op answers the BrtOp interface.
#pragma once

#include "llvm/ADT/StringRef.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace brt::bridge {

// The runtime attributes of `op`: its attributes but the passes' brt.*
// annotations (placement, generated kernels), which the serializer writes
// elsewhere.
mlir::DictionaryAttr RuntimeParams(mlir::Operation* op);

// Checks `op`'s operand and result counts against its kind's registry row.
mlir::LogicalResult VerifyRegistryArity(mlir::Operation* op, llvm::StringRef kind);

template <typename ConcreteType>
class RegistryArity : public mlir::OpTrait::TraitBase<ConcreteType, RegistryArity> {
 public:
  static mlir::LogicalResult verifyTrait(mlir::Operation* op) {
    return VerifyRegistryArity(op, ConcreteType::kKind);
  }
};

}  // namespace brt::bridge

#include "BrtOpInterface.h.inc"
#include "BrtOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "BrtOps.h.inc"

namespace brt::bridge {

// The registry op of `kind` (or brt.kernel for a plugin's kind) with these
// operands, result types and attributes, at b's insertion point: for code
// that makes ops of a kind it holds as data (the importer).
mlir::Operation* CreateOp(mlir::OpBuilder& b, mlir::Location loc, llvm::StringRef kind,
                          mlir::TypeRange results, mlir::ValueRange operands,
                          llvm::ArrayRef<mlir::NamedAttribute> attrs);

}  // namespace brt::bridge

// The brt MLIR dialect (compiler side only; the runtime never links MLIR).
#pragma once

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "BrtOpsDialect.h.inc"

#define GET_OP_CLASSES
#include "BrtOps.h.inc"

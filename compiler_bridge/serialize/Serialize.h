// brt dialect -> .brtx through the runtime's ExecutableBuilder (which also
// plans memory: liveness, 256-byte aligned offsets, one arena per device).
#pragma once

#include <string>

#include "brt/builder.h"
#include "mlir/IR/BuiltinOps.h"

namespace brt::bridge {

// Constants larger than this many bytes become weight segments; smaller ones
// stay inline in their op.
inline constexpr size_t kInlineConstantBytes = 256;

// Writes `module` (func.func @main of brt.kernel ops) to `path`. On failure
// returns a message with the location.
Status SerializeModule(mlir::ModuleOp module, const std::string& producer, const std::string& path,
                       BuildReport* report);

}  // namespace brt::bridge

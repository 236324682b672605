// StableHLO (generic MLIR text, as JAX prints it) -> brt dialect.
#pragma once

#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace brt::bridge {

// Registers what the compiler needs in a context: the func and brt dialects,
// with stablehlo/chlo left unregistered.
void PrepareContext(mlir::MLIRContext& context);

struct ImportResult {
  mlir::OwningOpRef<mlir::ModuleOp> module;  // one func.func @main of brt ops
  int source_ops = 0;  // StableHLO/CHLO ops read (calls inlined, loops unrolled)
  std::string error;   // "<location>: <message>" on failure
};

// On an argument of the imported `main`: the index of the result JAX writes
// in its place (a donated argument, `tf.aliasing_output`), for the
// serializer, which makes it state updated in place.
inline constexpr const char* kAliasOutputAttr = "brt.aliasing_output";

// On an argument of `main`, as brt.export_stablehlo writes it and the
// importer keeps it: the argument's name in the executable (its parameter
// and pytree path, e.g. "params.dense.w"). Without it: "arg<i>".
inline constexpr const char* kArgNameAttr = "brt.name";

// The StableHLO and CHLO ops the importer takes ("stablehlo.add", ...),
// sorted: the registry's kinds flagged kStableHlo or kChlo, and those it
// rewrites (stablehlo.while, chlo.erfc, ...).
std::vector<std::string> ImportedOpNames();

// Parses `text` and imports its public function `main` (or the only public
// function), inlining func.call.
ImportResult ImportStableHlo(mlir::MLIRContext& context, llvm::StringRef text,
                             llvm::StringRef source_name);

}  // namespace brt::bridge

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
  // func.func @main of brt ops, then the regions of its control flow
  mlir::OwningOpRef<mlir::ModuleOp> module;
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

// On an argument of `main`, as brt.compile_torch writes it: the names of its
// dimensions' symbols (torch.export's Dims), "" for a static one.
inline constexpr const char* kDimNamesAttr = "brt.dims";
// Beside it: each dimension's largest size (a Dim's max), 0 for none, and
// its smallest (a Dim's min), 0 or 1 for none.
inline constexpr const char* kDimMaxAttr = "brt.dim_max";
inline constexpr const char* kDimMinAttr = "brt.dim_min";

// On the imported `main`: the relations between its dimension symbols that
// the inputs must satisfy ("b >= 1"), from the program's shape assertions
// and what the importer needs to hold.
inline constexpr const char* kConstraintsAttr = "brt.constraints";

// On a function of the imported module other than `main`: it is a region
// (a loop's condition or body, a branch), which a brt while or case op names
// by its position in the module (main is 0; regions follow their user).
inline constexpr const char* kRegionAttr = "brt.region";

struct ImportOptions {
  // A stablehlo.while whose trip count is known at compile time is unrolled
  // when trips x its body's ops is at most this; any other runs as a loop.
  int64_t unroll_max_ops = 256;
};

// The StableHLO and CHLO ops the importer takes ("stablehlo.add", ...),
// sorted: the registry's kinds flagged kStableHlo or kChlo, and those it
// rewrites (stablehlo.while, chlo.erfc, ...).
std::vector<std::string> ImportedOpNames();

// Parses `text` and imports its public function `main` (or the only public
// function), inlining func.call.
ImportResult ImportStableHlo(mlir::MLIRContext& context, llvm::StringRef text,
                             llvm::StringRef source_name, const ImportOptions& options = {});

}  // namespace brt::bridge

// shard_map programs: JAX exports the per-device body of a shard_map inside
// the global `main`, either as the region of `sdy.manual_computation`
// (Shardy, JAX's default) or behind `@SPMDFullToShardShape` custom calls as
// `call @shmap_body` (the older GSPMD lowering). The bridge imports that body
// as the rank's function, with local shapes, and keeps the mesh and the
// shardings so callers can slice global arrays and assemble results.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace brt::bridge {

struct PerRankProgram {
  // The per-device body; null when `main` is not a shard_map program.
  mlir::Block* body = nullptr;
  std::vector<std::pair<std::string, int64_t>> mesh;
  // Per argument and result of the body, per dimension: the mesh axes it is
  // split over, comma-joined ("" where whole).
  std::vector<std::vector<std::string>> arg_sharding, result_sharding;
};

// Finds the per-rank body of `main`. Returns false and sets *error (naming
// the construct) for a sharding form the bridge cannot run.
bool FindPerRankProgram(mlir::ModuleOp module, mlir::func::FuncOp main, PerRankProgram& out,
                        std::string* error);

// Attribute names the importer puts on the per-rank `main` for the
// serializer: the mesh ("x=4,y=2") on the function, the sharding (an array
// of strings, one per dimension) on each argument and result.
inline constexpr const char* kMeshAttr = "brt.mesh";
inline constexpr const char* kShardingAttr = "brt.sharding";

}  // namespace brt::bridge

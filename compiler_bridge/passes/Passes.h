// The compiler's passes over the brt dialect, declared in Passes.td (one file
// per pass under passes/, each with a lit test in tests/lit/): the generated
// create<Name>() constructors, and the pipeline (Pipeline.cc).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace brt::bridge {

// The discardable attribute holding an op's device ("cpu" or "cuda").
inline constexpr const char* kDeviceAttr = "brt.device";
// The discardable attribute holding an op's generated kernel (a dictionary:
// name, target, source, image, block_size), from brt-generate-cuda-kernels.
inline constexpr const char* kGeneratedKernelAttr = "brt.generated_kernel";

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

// Registers every pass with MLIR's registry, for brt-opt.
void RegisterPasses();

// The compiler's pipeline for `target` (cpu or cuda; generated kernels' PTX
// for `cuda_arch`), in order: a name for dumps and the pass.
struct PipelineStep {
  std::string name;
  std::unique_ptr<mlir::Pass> pass;
  // Whether the pass is written for symbolic sizes (SymbolicDims.h): it
  // keeps the expressions of the types it makes and compares sizes by them.
  // A module with symbolic sizes skips the others.
  bool on_symbolic_sizes = false;
};
struct PipelineOptions {
  std::string target = "cpu";
  std::string cuda_arch = "compute_80";
  // The executable function the module becomes, in its generated kernels'
  // names (brt-generate-cuda-kernels' prefix).
  std::string kernel_prefix;
  // brt-bucket-all-reduce's bucket size (0: one all_reduce each).
  int64_t all_reduce_bucket_bytes = 65536;
  // brt-fuse-collective-matmul's min-rows-per-rank; < 0: the target's
  // default (kOverlapMinRowsCuda on cuda, 0 on cpu).
  int64_t overlap_min_rows = -1;
};
// Below this many rows per rank a GPU's AG+GEMM and GEMM+RS stay serial:
// where published async-TP measurements put the decomposition's break-even
// (brt's own awaits a multi-GPU run).
inline constexpr int64_t kOverlapMinRowsCuda = 512;
std::vector<PipelineStep> CompilerPipeline(const PipelineOptions& options);

// Runs one step's pass on `module` (nested on its functions unless the pass
// is a module pass), consuming it. Returns "" on success, else the first
// diagnostic ("<location>: <message>") or "pass '<name>' failed". A step
// not written for symbolic sizes leaves a module that has them as it is.
std::string RunPipelineStep(mlir::ModuleOp module, PipelineStep& step);
// Whether a function of `module` takes or returns symbolic sizes.
bool HasSymbolicSizes(mlir::ModuleOp module);

}  // namespace brt::bridge

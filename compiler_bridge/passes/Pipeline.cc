// The compiler's pipeline, in order, and the passes' registration for
// brt-opt.
#include "SymbolicDims.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "passes/Passes.h"

namespace brt::bridge {

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

void RegisterPasses() { registerBrtPasses(); }

std::vector<PipelineStep> CompilerPipeline(const PipelineOptions& options) {
  const std::string& target = options.target;
  const int64_t overlap_min_rows = options.overlap_min_rows >= 0 ? options.overlap_min_rows
                                   : target == "cuda"            ? kOverlapMinRowsCuda
                                                                 : 0;
  std::vector<PipelineStep> steps;
  steps.push_back({"verify", createVerify(), true});
  steps.push_back({"fold-constants", createFoldConstants(), true});
  steps.push_back({"cse", mlir::createCSEPass(), true});
  steps.push_back({"simplify", createSimplify(), true});
  // Batch norm folds into the convolution weights once simplify has made its
  // per-channel vectors plain broadcasts; the new weights are constants.
  steps.push_back({"fold-batch-norm", createFoldBatchNorm()});
  steps.push_back({"fold-constants", createFoldConstants(), true});
  steps.push_back({"channels-last", createChannelsLast(ChannelsLastOptions{target})});
  steps.push_back({"fold-transpose-into-dot", createFoldTransposeIntoDot(), true});
  steps.push_back({"fuse-collective-matmul",
                   createFuseCollectiveMatmul(FuseCollectiveMatmulOptions{overlap_min_rows})});
  steps.push_back({"fuse-softmax", createFuseSoftmax(FuseSoftmaxOptions{target}), true});
  steps.push_back({"fuse-layer-norm", createFuseLayerNorm(), true});
  steps.push_back({"fuse-epilogues", createFuseEpilogues(FuseEpiloguesOptions{target}), true});
  steps.push_back({"canonicalize", mlir::createCanonicalizerPass(), true});
  steps.push_back({"fuse-attention", createFuseAttention(FuseAttentionOptions{target}), true});
  steps.push_back({"fuse-elementwise", createFuseElementwise(), true});
  steps.push_back({"cleanup", mlir::createCanonicalizerPass(), true});
  steps.push_back({"bucket-all-reduce",
                   createBucketAllReduce(BucketAllReduceOptions{options.all_reduce_bucket_bytes})});
  steps.push_back({"place", createPlace(PlaceOptions{target}), true});
  if (target == "cuda")
    steps.push_back({"generate-cuda-kernels",
                     createGenerateCudaKernels(
                         GenerateCudaKernelsOptions{options.cuda_arch, options.kernel_prefix}),
                     true});
  return steps;
}

bool HasSymbolicSizes(mlir::ModuleOp module) {
  bool symbolic = false;
  module.walk([&](mlir::func::FuncOp fn) {
    symbolic = symbolic || llvm::any_of(fn.getArgumentTypes(), HasSymbolicDims) ||
               llvm::any_of(fn.getResultTypes(), HasSymbolicDims);
  });
  return symbolic;
}

std::string RunPipelineStep(mlir::ModuleOp module, PipelineStep& step) {
  if (!step.on_symbolic_sizes && HasSymbolicSizes(module)) return "";
  mlir::MLIRContext* context = module.getContext();
  mlir::PassManager pm(context);
  if (step.pass->getOpName() == mlir::ModuleOp::getOperationName())
    pm.addPass(std::move(step.pass));
  else
    pm.addNestedPass<mlir::func::FuncOp>(std::move(step.pass));
  std::string diagnostic;
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic& d) {
    if (diagnostic.empty()) {
      llvm::raw_string_ostream os(diagnostic);
      d.getLocation().print(os);
      os << ": " << d.str();
    }
    return mlir::success();
  });
  if (mlir::succeeded(pm.run(module))) return "";
  return diagnostic.empty() ? "pass '" + step.name + "' failed" : diagnostic;
}

}  // namespace brt::bridge

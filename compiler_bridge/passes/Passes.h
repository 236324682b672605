// Passes over the brt dialect. Each has a lit test in tests/lit/.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "mlir/Pass/Pass.h"

namespace brt::bridge {

// The discardable attribute holding an op's device ("cpu" or "cuda").
inline constexpr const char* kDeviceAttr = "brt.device";
// Places every op for `target` (cpu or cuda): kinds the CUDA provider does
// not run stay on the CPU, with brt.copy where values cross devices.
std::unique_ptr<mlir::Pass> CreatePlacePass(const std::string& target);
void RegisterPlacePass();

// Small ops of constants, evaluated by the runtime's CPU provider.
std::unique_ptr<mlir::Pass> CreateFoldConstantsPass();
void RegisterFoldConstantsPass();

// Shape and dtype rules of the common kinds, errors at the source location.
std::unique_ptr<mlir::Pass> CreateVerifyPass();
void RegisterVerifyPass();

// softmax (reduce-max, subtract, exp, reduce-add, divide over one axis) ->
// one brt.softmax.
std::unique_ptr<mlir::Pass> CreateFuseSoftmaxPass();
// Single-use chains of f32/f16/bf16 elementwise ops -> brt.fused_elementwise,
// folding NumPy-compatible broadcasts and scalar constants into it.
std::unique_ptr<mlir::Pass> CreateFuseElementwisePass();

// (x - mean) * rsqrt(var + eps) * scale + shift over the last dim ->
// brt.layer_norm.
std::unique_ptr<mlir::Pass> CreateFuseLayerNormPass();
// dot_general(transpose(x), ...) -> dot_general(x, ...) with remapped dims.
std::unique_ptr<mlir::Pass> CreateFoldTransposeIntoDotPass();

// dot_general / convolution + bias add + relu/tanh/gelu -> brt.matmul / brt.conv.
std::unique_ptr<mlir::Pass> CreateFuseEpiloguesPass();

void RegisterPasses();

// The compiler's pipeline, in order: a name for dumps and the pass.
struct PipelineStep {
  std::string name;
  std::unique_ptr<mlir::Pass> pass;
};
std::vector<PipelineStep> CompilerPipeline(const std::string& target);

}  // namespace brt::bridge

// brt-generate-cuda-kernels: for each op placed on cuda that the code
// generator takes (brt.fused_elementwise, reduce over trailing dims), its CUDA
// C (codegen/CudaCodegen.h), compiled to PTX by NVRTC, attached to the op as
// brt.generated_kernel = {name, target, source, image, block_size}. The
// serializer embeds it in the executable's kernel table; an op without one is
// run by the CUDA provider's own kernel.
#include "BrtDialect.h"
#include "codegen/CudaCodegen.h"
#include "llvm/ADT/TypeSwitch.h"
#include "passes/Passes.h"

namespace brt::bridge {

#define GEN_PASS_DEF_GENERATECUDAKERNELS
#include "passes/Passes.h.inc"

namespace {

struct GenerateCudaKernelsPass : impl::GenerateCudaKernelsBase<GenerateCudaKernelsPass> {
  using GenerateCudaKernelsBase::GenerateCudaKernelsBase;

  void runOnOperation() override {
    int count = 0;
    mlir::WalkResult walked = getOperation().walk([&](mlir::Operation* op) {
      auto device = op->getAttrOfType<mlir::StringAttr>(kDeviceAttr);
      if (!device || device.getValue() != "cuda") return mlir::WalkResult::advance();
      CudaKernel kernel;
      // The name is the PTX entry's and the executable's kernel table's: unique
      // across the module's functions (one count) and the executable's
      // modules (the prefix), as a C identifier.
      std::string name =
          "brt_kernel_" + prefix + (prefix.empty() ? "" : "_") + std::to_string(count);
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      const bool made = llvm::TypeSwitch<mlir::Operation*, bool>(op)
                            .Case([&](FusedElementwiseOp f) {
                              return GenerateFusedElementwise(f, name, &kernel);
                            })
                            .Case([&](ReduceOp r) { return GenerateRowReduce(r, name, &kernel); })
                            .Default(false);
      if (!made) return mlir::WalkResult::advance();
      std::string ptx, error;
      if (!CompileToPtx(kernel, arch, &ptx, &error)) {
        op->emitError() << error;
        return mlir::WalkResult::interrupt();
      }
      mlir::Builder b(op->getContext());
      op->setAttr(kGeneratedKernelAttr,
                  b.getDictionaryAttr(
                      {b.getNamedAttr("name", b.getStringAttr(name)),
                       b.getNamedAttr("target", b.getStringAttr("ptx:" + arch)),
                       b.getNamedAttr("source", b.getStringAttr(kernel.source)),
                       b.getNamedAttr("image", b.getStringAttr(ptx)),
                       b.getNamedAttr("block_size", b.getI64IntegerAttr(kernel.block_size))}));
      ++count;
      return mlir::WalkResult::advance();
    });
    if (walked.wasInterrupted()) signalPassFailure();
  }
};

}  // namespace
}  // namespace brt::bridge

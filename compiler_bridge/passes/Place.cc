// brt-place: chooses a device per op for the compile target and inserts
// brt.copy where a value crosses devices. Function arguments and results
// live on the target device.
#include "BrtDialect.h"
#include "OpKinds.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "passes/Passes.h"

namespace brt::bridge {

#define GEN_PASS_DEF_PLACE
#include "passes/Passes.h.inc"
namespace {

// Kinds the CUDA provider runs; the rest stay on the CPU.
bool RunsOnCuda(llvm::StringRef kind) {
  const KindInfo* info = FindKind(kind);
  return info && info->cuda;
}

struct PlacePass : impl::PlaceBase<PlacePass> {
  using PlaceBase::PlaceBase;

  void runOnOperation() override {
    if (target != "cpu" && target != "cuda") {
      getOperation().emitError() << "unknown target '" << target << "' (cpu or cuda)";
      return signalPassFailure();
    }
    mlir::func::FuncOp fn = getOperation();
    mlir::OpBuilder b(fn.getContext());
    const auto target_attr = b.getStringAttr(target.getValue());
    auto device_of = [&](mlir::Value v) {
      if (auto k = v.getDefiningOp<KernelOp>())
        return k->getAttrOfType<mlir::StringAttr>(kDeviceAttr);
      return target_attr;  // function arguments
    };
    // One copy per (value, device).
    llvm::DenseMap<std::pair<mlir::Value, mlir::Attribute>, mlir::Value> copies;
    auto on = [&](mlir::Value v, mlir::StringAttr device, mlir::Operation* before) {
      if (device_of(v) == device) return v;
      auto& slot = copies[{v, device}];
      if (!slot) {
        b.setInsertionPoint(before);
        auto copy = KernelOp::create(b, before->getLoc(), mlir::TypeRange{v.getType()},
                                     b.getStringAttr("brt.copy"), mlir::ValueRange{v},
                                     b.getDictionaryAttr({}));
        copy->setAttr(kDeviceAttr, device);
        slot = copy.getResult(0);
      }
      return slot;
    };
    fn.walk([&](mlir::Operation* op) {
      if (auto k = mlir::dyn_cast<KernelOp>(op)) {
        if (k.getKind() == "brt.copy") return;
        auto device =
            target == "cuda" && RunsOnCuda(k.getKind()) ? target_attr : b.getStringAttr("cpu");
        k->setAttr(kDeviceAttr, device);
        for (mlir::OpOperand& use : k->getOpOperands()) use.set(on(use.get(), device, k));
      } else if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
        for (mlir::OpOperand& use : ret->getOpOperands()) use.set(on(use.get(), target_attr, ret));
      }
    });
  }
};

}  // namespace
}  // namespace brt::bridge

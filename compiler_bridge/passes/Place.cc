// brt-place: chooses a device per op for the compile target and inserts
// brt.copy where a value crosses devices. Function arguments and results
// live on the target device. Which kinds, on which dtypes, a device runs
// comes from the providers' own kernel tables, loaded as the runtime loads
// them.
#include <set>

#include "BrtDialect.h"
#include "RuntimeTypes.h"
#include "brt/session.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_PLACE
#include "passes/Passes.h.inc"
namespace {

// Per kind, the dtypes the plugins named in `providers` run it on, on CUDA
// devices; or an error naming the plugin that could not be asked.
using KindDTypes = llvm::StringMap<std::set<brt::DType>>;
mlir::FailureOr<KindDTypes> CudaKinds(llvm::StringRef providers, mlir::MLIRContext* ctx) {
  KindDTypes kinds;
  llvm::SmallVector<llvm::StringRef> names;
  providers.split(names, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef name : names) {
    auto listing = brt::ListProviderKernels(name.trim().str());
    if (!listing.ok())
      return mlir::emitError(mlir::UnknownLoc::get(ctx))
             << "target cuda: cannot ask provider '" << name.trim()
             << "' which ops run on CUDA: " << listing.status().message();
    for (const brt::KernelListing& k : *listing)
      if (k.device == brt::DeviceKind::kCuda)
        kinds[k.kind].insert(k.dtypes.begin(), k.dtypes.end());
  }
  return kinds;
}

struct PlacePass : impl::PlaceBase<PlacePass> {
  using PlaceBase::PlaceBase;

  // Asks the plugins once per compile, not once per function.
  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    if (target != "cuda") return mlir::success();
    auto kinds = CudaKinds(providers, ctx);
    if (mlir::failed(kinds)) return mlir::failure();
    cuda_kinds_ = std::move(*kinds);
    return mlir::success();
  }

  void runOnOperation() override {
    if (target != "cpu" && target != "cuda") {
      getOperation().emitError() << "unknown target '" << target << "' (cpu or cuda)";
      return signalPassFailure();
    }
    mlir::func::FuncOp fn = getOperation();
    mlir::OpBuilder b(fn.getContext());
    const auto target_attr = b.getStringAttr(target.getValue());
    auto device_of = [&](mlir::Value v) {
      if (auto k = v.getDefiningOp<BrtOp>()) return k->getAttrOfType<mlir::StringAttr>(kDeviceAttr);
      return target_attr;  // function arguments
    };
    // One copy per (value, device).
    llvm::DenseMap<std::pair<mlir::Value, mlir::Attribute>, mlir::Value> copies;
    auto on = [&](mlir::Value v, mlir::StringAttr device, mlir::Operation* before) {
      if (device_of(v) == device) return v;
      auto& slot = copies[{v, device}];
      if (!slot) {
        b.setInsertionPoint(before);
        auto copy =
            CopyOp::create(b, before->getLoc(), mlir::TypeRange{v.getType()}, mlir::ValueRange{v});
        copy->setAttr(kDeviceAttr, device);
        slot = copy.getResult(0);
      }
      return slot;
    };
    fn.walk([&](mlir::Operation* op) {
      if (auto k = mlir::dyn_cast<BrtOp>(op)) {
        if (mlir::isa<CopyOp>(op)) return;
        // Control flow runs where its regions' arguments live: on the target.
        const bool on_target = OnCuda(k) || k.getKind() == "while" || k.getKind() == "case";
        auto device = on_target ? target_attr : b.getStringAttr("cpu");
        k->setAttr(kDeviceAttr, device);
        for (mlir::OpOperand& use : k->getOpOperands()) use.set(on(use.get(), device, op));
      } else if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
        for (mlir::OpOperand& use : ret->getOpOperands()) use.set(on(use.get(), target_attr, ret));
      }
    });
  }

 private:
  // Whether the target's providers run `k` on CUDA: its kind, with its first
  // result's dtype (what kernel tables are keyed by). A complex first operand
  // must be listed too: abs of a complex number has a real result, and a
  // table that lists abs only for real operands does not run it. (Other
  // operands may differ from the key: a select's predicate, a gather's
  // indices.)
  bool OnCuda(BrtOp k) const {
    auto it = cuda_kinds_.find(k.getKind());
    if (it == cuda_kinds_.end()) return false;
    auto takes = [&](mlir::Value v) {
      return it->second.count(ToDType(TypeOf(v).getElementType())) > 0;
    };
    const bool complex_operand =
        k->getNumOperands() > 0 &&
        mlir::isa<mlir::ComplexType>(TypeOf(k->getOperand(0)).getElementType());
    return (k->getNumResults() == 0 || takes(k->getResult(0))) &&
           (!complex_operand || takes(k->getOperand(0)));
  }

  KindDTypes cuda_kinds_;  // what the target's providers run on CUDA
};

}  // namespace
}  // namespace brt::bridge

// brt-fuse-softmax: the softmax JAX writes (max, subtract, exp, sum, divide
// over one axis) becomes one brt.softmax.
#include "BrtDialect.h"
#include "OpKinds.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSESOFTMAX
#include "passes/Passes.h.inc"

namespace {

struct FuseSoftmaxPass : impl::FuseSoftmaxBase<FuseSoftmaxPass> {
  // divide(e, B(reduce_add(e))) with e = exp(subtract(x, B([maximum(c,] reduce_max(x)[)])))
  void runOnOperation() override {
    llvm::SmallVector<KernelOp> divides;
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() == "divide") divides.push_back(k);
    });
    for (KernelOp div : divides) {
      KernelOp exp = Kernel(div.getInputs()[0], "exponential");
      if (!exp) continue;
      KernelOp sum = Kernel(StripBroadcasts(div.getInputs()[1]), "reduce");
      KernelOp sub = Kernel(exp.getInputs()[0], "subtract");
      if (!sum || !sub || sum.getInputs()[0] != exp.getResult(0)) continue;
      auto dims = sum.getParams().getAs<mlir::DenseI64ArrayAttr>("dimensions");
      if (!dims || dims.size() != 1) continue;
      const int64_t axis = dims[0];
      mlir::Value x = sub.getInputs()[0];
      mlir::Value max = StripBroadcasts(sub.getInputs()[1]);
      if (KernelOp guard = Kernel(max, "maximum")) max = guard.getInputs()[1];  // max(-inf, m)
      KernelOp reduce_max = max.getDefiningOp<KernelOp>();
      if (!ReducesOver(sum, "add", axis) || !ReducesOver(reduce_max, "max", axis) ||
          reduce_max.getInputs()[0] != x || !ScalarConstant(sum.getInputs()[1]) ||
          *ScalarConstant(sum.getInputs()[1]) != 0.0)
        continue;
      // exp's value is used by the sum and the divide only (else it must stay).
      if (!llvm::all_of(exp->getUsers(), [&](mlir::Operation* u) { return u == sum || u == div; }))
        continue;
      if (TypeOf(x) != TypeOf(div.getResult(0))) continue;
      mlir::OpBuilder b(div);
      auto fused = KernelOp::create(
          b, div.getLoc(), mlir::TypeRange{div.getResult(0).getType()},
          b.getStringAttr("brt.softmax"), mlir::ValueRange{x},
          b.getDictionaryAttr({b.getNamedAttr("axis", b.getI64IntegerAttr(axis))}));
      div.getResult(0).replaceAllUsesWith(fused.getResult(0));
      div->erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

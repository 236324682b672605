// brt-fuse-softmax: the softmax JAX and PyTorch write (max, subtract, exp,
// sum, divide over one axis) becomes one brt.softmax; PyTorch's safe form,
// which selects zeros for a line that is all -inf, one with
// zero_masked_rows. For the CPU, whose brt.softmax (oneDNN's) takes f32 and
// bf16 only, an f16 or f64 softmax stays as it is.
#include <limits>

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
  using FuseSoftmaxBase::FuseSoftmaxBase;

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
      const mlir::Type element = TypeOf(x).getElementType();
      if (target == "cpu" && !element.isF32() && !element.isBF16()) continue;
      // PyTorch's safe softmax (scaled_dot_product_attention): a line of x
      // that is all -inf gives zeros, not NaN.
      KernelOp safe = SafeSelect(div, x, axis);
      KernelOp replaced = safe ? safe : div;
      mlir::OpBuilder b(replaced);
      llvm::SmallVector<mlir::NamedAttribute> params = {
          b.getNamedAttr("axis", b.getI64IntegerAttr(axis))};
      if (safe) params.push_back(b.getNamedAttr("zero_masked_rows", b.getI64IntegerAttr(1)));
      auto fused = KernelOp::create(
          b, replaced.getLoc(), mlir::TypeRange{replaced.getResult(0).getType()},
          b.getStringAttr("brt.softmax"), mlir::ValueRange{x}, b.getDictionaryAttr(params));
      replaced.getResult(0).replaceAllUsesWith(fused.getResult(0));
      replaced->erase();
      if (safe && div->use_empty()) div->erase();
    }
  }

  // select(B(reduce_and(compare(x, B(-inf)) EQ over axis)), B(0), softmax)
  // as softmax's only user, or null.
  static KernelOp SafeSelect(KernelOp softmax, mlir::Value x, int64_t axis) {
    if (!softmax->hasOneUse()) return nullptr;
    auto select = mlir::dyn_cast<KernelOp>(*softmax->getUsers().begin());
    if (!select || select.getKind() != "select" || select.getInputs().size() != 3 ||
        select.getInputs()[2] != softmax.getResult(0) ||
        ScalarConstant(select.getInputs()[1]) != 0.0)
      return nullptr;
    KernelOp all = Kernel(StripBroadcasts(select.getInputs()[0]), "reduce");
    if (!ReducesOver(all, "and", axis)) return nullptr;
    KernelOp eq = Kernel(all.getInputs()[0], "compare");
    auto dir = eq ? eq.getParams().getAs<mlir::StringAttr>("comparison_direction") : nullptr;
    if (!dir || dir.getValue() != "EQ" || eq.getInputs()[0] != x ||
        ScalarConstant(eq.getInputs()[1]) != -std::numeric_limits<double>::infinity())
      return nullptr;
    return select;
  }
};

}  // namespace
}  // namespace brt::bridge

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
    llvm::SmallVector<DivOp> divides;
    getOperation().walk([&](DivOp div) { divides.push_back(div); });
    for (DivOp div : divides) {
      auto exp = div.getInputs()[0].getDefiningOp<ExpOp>();
      if (!exp) continue;
      auto sum = StripBroadcasts(div.getInputs()[1]).getDefiningOp<ReduceOp>();
      auto sub = exp.getInputs()[0].getDefiningOp<SubOp>();
      if (!sum || !sub || sum.getInputs()[0] != exp.getResult(0)) continue;
      if (sum.getDimensions().size() != 1) continue;
      const int64_t axis = sum.getDimensions()[0];
      mlir::Value x = sub.getInputs()[0];
      mlir::Value max = StripBroadcasts(sub.getInputs()[1]);
      if (auto guard = max.getDefiningOp<MaxOp>()) max = guard.getInputs()[1];  // max(-inf, m)
      auto reduce_max = max.getDefiningOp<ReduceOp>();
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
      SelectOp safe = SafeSelect(div, x, axis);
      mlir::Operation* replaced = safe ? safe.getOperation() : div.getOperation();
      mlir::OpBuilder b(replaced);
      auto fused = SoftmaxOp::create(b, replaced->getLoc(),
                                     mlir::TypeRange{replaced->getResult(0).getType()},
                                     mlir::ValueRange{x}, b.getI64IntegerAttr(axis),
                                     safe ? b.getI64IntegerAttr(1) : mlir::IntegerAttr());
      replaced->getResult(0).replaceAllUsesWith(fused.getResult(0));
      replaced->erase();
      if (safe && div->use_empty()) div->erase();
    }
  }

  // select(B(reduce_and(compare(x, B(-inf)) EQ over axis)), B(0), softmax)
  // as softmax's only user, or null.
  static SelectOp SafeSelect(DivOp softmax, mlir::Value x, int64_t axis) {
    if (!softmax->hasOneUse()) return nullptr;
    auto select = mlir::dyn_cast<SelectOp>(*softmax->getUsers().begin());
    if (!select || select.getInputs()[2] != softmax.getResult(0) ||
        ScalarConstant(select.getInputs()[1]) != 0.0)
      return nullptr;
    auto all = StripBroadcasts(select.getInputs()[0]).getDefiningOp<ReduceOp>();
    if (!ReducesOver(all, "and", axis)) return nullptr;
    auto eq = all.getInputs()[0].getDefiningOp<CompareOp>();
    if (!eq || eq.getComparisonDirection() != "EQ" || eq.getInputs()[0] != x ||
        ScalarConstant(eq.getInputs()[1]) != -std::numeric_limits<double>::infinity())
      return nullptr;
    return select;
  }
};

}  // namespace
}  // namespace brt::bridge

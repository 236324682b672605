// brt-fuse-softmax: the softmax JAX and PyTorch write (max, subtract, exp,
// sum, divide over one axis) becomes one brt.softmax; PyTorch's safe form,
// which selects zeros for a line that is all -inf, one with
// zero_masked_rows. For the CPU, whose brt.softmax (oneDNN's) takes f32 and
// bf16 only, an f16 or f64 softmax stays as it is.
#include <limits>
#include <optional>

#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSESOFTMAX
#include "passes/Passes.h.inc"

namespace {

// What a softmax reads: x, normalized over `axis`.
struct SoftmaxInput {
  mlir::Value x;
  int64_t axis;
};

// Whether v is a constant no greater than the lowest finite value of
// `element` (-inf, or the lowest float as an exporter may write it): a
// maximum with it, or a reduce_max starting from it, changes no line's max
// unless the line is all -inf. Another constant c shifts the softmax's
// exponents, as max(0, m) does: the same softmax in exact arithmetic, not in
// floats, where exp(x - c) underflows to a 0 / 0 that brt.softmax would not
// give.
bool IsMaxIdentity(mlir::Value v, mlir::Type element) {
  const std::optional<double> c = ScalarConstant(v);
  auto type = mlir::dyn_cast<mlir::FloatType>(element);
  return c && type &&
         *c <= llvm::APFloat::getLargest(type.getFloatSemantics(), /*Negative=*/true)
                   .convertToDouble();
}

// divide(e, B(reduce_add(e))) with e = exp(subtract(x, B([maximum(c,] reduce_max(x)[)]))),
// each B taking the reduced lines back where they were (else it pairs a line
// with another's max or sum), e used by the sum and the divide only, in a
// type the target's brt.softmax takes: its x and axis.
std::optional<SoftmaxInput> MatchSoftmax(DivOp div, bool cpu) {
  auto exp = div.getInputs()[0].getDefiningOp<ExpOp>();
  if (!exp) return std::nullopt;
  auto sum = StripBroadcasts(div.getInputs()[1]).getDefiningOp<ReduceOp>();
  auto sub = exp.getInputs()[0].getDefiningOp<SubOp>();
  if (!sum || !sub || sum.getInputs()[0] != exp.getResult(0)) return std::nullopt;
  if (sum.getDimensions().size() != 1) return std::nullopt;
  const int64_t axis = sum.getDimensions()[0];
  mlir::Value x = sub.getInputs()[0];
  const mlir::Type element = TypeOf(x).getElementType();
  mlir::Value max = StripBroadcasts(sub.getInputs()[1]);
  if (auto guard = max.getDefiningOp<MaxOp>()) {  // max(-inf, m)
    if (!IsMaxIdentity(guard.getInputs()[0], element)) return std::nullopt;
    max = guard.getInputs()[1];
  }
  auto reduce_max = max.getDefiningOp<ReduceOp>();
  if (!ReducesOver(sum, "add", axis) || !ReducesOver(reduce_max, "max", axis) ||
      reduce_max.getInputs()[0] != x || !IsMaxIdentity(reduce_max.getInputs()[1], element) ||
      !ScalarConstant(sum.getInputs()[1]) || *ScalarConstant(sum.getInputs()[1]) != 0.0)
    return std::nullopt;
  const int64_t rank = TypeOf(x).getRank();
  if (!RestoresReducedDims(div.getInputs()[1], rank, axis) ||
      !RestoresReducedDims(sub.getInputs()[1], rank, axis))
    return std::nullopt;
  // exp's value is used by the sum and the divide only (else it must stay).
  if (!llvm::all_of(exp->getUsers(), [&](mlir::Operation* u) { return u == sum || u == div; }))
    return std::nullopt;
  if (TypeOf(x) != TypeOf(div.getResult(0))) return std::nullopt;
  if (cpu && !element.isF32() && !element.isBF16()) return std::nullopt;
  return SoftmaxInput{x, axis};
}

// PyTorch's safe softmax (scaled_dot_product_attention): a line of x that is
// all -inf gives zeros, not NaN. select(B(reduce_and(compare(x, B(-inf)) EQ
// over axis)), B(0), softmax) as softmax's only user, B taking each line's
// mask back to that line, or null.
SelectOp SafeSelect(DivOp softmax, const SoftmaxInput& in) {
  if (!softmax->hasOneUse()) return nullptr;
  auto select = mlir::dyn_cast<SelectOp>(*softmax->getUsers().begin());
  if (!select || select.getInputs()[2] != softmax.getResult(0) ||
      ScalarConstant(select.getInputs()[1]) != 0.0)
    return nullptr;
  auto all = StripBroadcasts(select.getInputs()[0]).getDefiningOp<ReduceOp>();
  if (!ReducesOver(all, "and", in.axis) ||
      !RestoresReducedDims(select.getInputs()[0], TypeOf(in.x).getRank(), in.axis))
    return nullptr;
  auto eq = all.getInputs()[0].getDefiningOp<CompareOp>();
  if (!eq || eq.getComparisonDirection() != "EQ" || eq.getInputs()[0] != in.x ||
      ScalarConstant(eq.getInputs()[1]) != -std::numeric_limits<double>::infinity())
    return nullptr;
  return select;
}

// brt.softmax of `in` in place of `replaced`, made before it.
void ReplaceWithSoftmax(mlir::PatternRewriter& rewriter, mlir::Operation* replaced,
                        const SoftmaxInput& in, bool zero_masked_rows) {
  rewriter.setInsertionPoint(replaced);
  auto fused = SoftmaxOp::create(
      rewriter, replaced->getLoc(), mlir::TypeRange{replaced->getResult(0).getType()},
      mlir::ValueRange{in.x}, rewriter.getI64IntegerAttr(in.axis),
      zero_masked_rows ? rewriter.getI64IntegerAttr(1) : mlir::IntegerAttr());
  rewriter.replaceOp(replaced, fused.getResults());
}

// The softmax's divide becomes brt.softmax, unless a safe select follows it
// (SelectToSoftmax's, at the select).
struct DivToSoftmax : mlir::OpRewritePattern<DivOp> {
  DivToSoftmax(mlir::MLIRContext* ctx, bool cpu) : OpRewritePattern(ctx), cpu(cpu) {}

  mlir::LogicalResult matchAndRewrite(DivOp div, mlir::PatternRewriter& rewriter) const override {
    const std::optional<SoftmaxInput> in = MatchSoftmax(div, cpu);
    if (!in || SafeSelect(div, *in)) return mlir::failure();
    ReplaceWithSoftmax(rewriter, div, *in, /*zero_masked_rows=*/false);
    return mlir::success();
  }

  bool cpu;
};

// The safe softmax's select becomes brt.softmax with zero_masked_rows, its
// divide goes. Rooted at the select, which follows the divide: the walk
// steps past the op it visits before rewriting it, so a pattern may erase
// that op and ops before it, never ops after it.
struct SelectToSoftmax : mlir::OpRewritePattern<SelectOp> {
  SelectToSoftmax(mlir::MLIRContext* ctx, bool cpu) : OpRewritePattern(ctx), cpu(cpu) {}

  mlir::LogicalResult matchAndRewrite(SelectOp select,
                                      mlir::PatternRewriter& rewriter) const override {
    auto div = select.getInputs()[2].getDefiningOp<DivOp>();
    const std::optional<SoftmaxInput> in = div ? MatchSoftmax(div, cpu) : std::nullopt;
    if (!in || SafeSelect(div, *in) != select) return mlir::failure();
    ReplaceWithSoftmax(rewriter, select, *in, /*zero_masked_rows=*/true);
    rewriter.eraseOp(div);
    return mlir::success();
  }

  bool cpu;
};

struct FuseSoftmaxPass : impl::FuseSoftmaxBase<FuseSoftmaxPass> {
  using FuseSoftmaxBase::FuseSoftmaxBase;

  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<DivToSoftmax, SelectToSoftmax>(ctx, target == "cpu");
    patterns_ = std::move(set);
    return mlir::success();
  }

  void runOnOperation() override { mlir::walkAndApplyPatterns(getOperation(), patterns_); }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

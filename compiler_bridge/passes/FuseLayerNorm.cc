// brt-fuse-layer-norm: (x - mean) * rsqrt(var + eps) * scale + shift over the
// last dim, of static size, becomes one brt.layer_norm (the variance as JAX
// writes it, or in f64 as PyTorch's decomposition does; brt.layer_norm
// computes it in f32).
#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSELAYERNORM
#include "passes/Passes.h.inc"

namespace {

// Matches the binary op `k` (null: no match) with operands (a, b) in either
// order, calling `match(a, b)` until it succeeds.
template <typename Op, typename F>
bool Commuted(Op k, F&& match) {
  if (!k) return false;
  return match(k.getInputs()[0], k.getInputs()[1]) || match(k.getInputs()[1], k.getInputs()[0]);
}

// Whether `mean` is B(divide(B(reduce_add(v over last)), B(C))) with C the
// size of the last dim, which must be static (a constant C proves nothing
// about a symbolic size), and each B taking a row's sum back to that row.
bool IsMeanOverLast(mlir::Value mean, mlir::Value of) {
  const llvm::ArrayRef<int64_t> shape = TypeOf(of).getShape();
  const int64_t rank = TypeOf(of).getRank();
  if (shape.empty() || mlir::ShapedType::isDynamic(shape.back()) ||
      !RestoresReducedDims(mean, rank, rank - 1))
    return false;
  auto div = StripBroadcasts(mean).getDefiningOp<DivOp>();
  if (!div || !RestoresReducedDims(div.getInputs()[0], rank, rank - 1)) return false;
  auto sum = StripBroadcasts(div.getInputs()[0]).getDefiningOp<ReduceOp>();
  auto n = ScalarConstant(div.getInputs()[1]);
  return ReducesOver(sum, "add", rank - 1) && sum.getInputs()[0] == of &&
         ScalarConstant(sum.getInputs()[1]) == 0.0 && n && *n == static_cast<double>(shape.back());
}

// The d whose squares' mean over the last dim `var` is
// (divide(B(reduce_add(d * d)), B(C))), or null.
mlir::Value MeanSquareOperand(mlir::Value var) {
  auto div = var.getDefiningOp<DivOp>();
  auto square = div ? StripBroadcasts(div.getInputs()[0]).getDefiningOp<ReduceOp>() : ReduceOp();
  auto mul = square ? square.getInputs()[0].getDefiningOp<MulOp>() : MulOp();
  if (!mul || mul.getInputs()[0] != mul.getInputs()[1] || !IsMeanOverLast(var, mul.getResult(0)))
    return nullptr;
  return mul.getInputs()[0];
}

// The variance of x over its last dim, as JAX writes it (the mean square of
// `d`, the x - mean the normalization uses) or as PyTorch's decomposition
// does (convert(the mean square of c - mean(c)) with c = x in f64).
bool IsVarianceOf(mlir::Value var, mlir::Value x, mlir::Value d) {
  if (MeanSquareOperand(var) == d) return true;
  auto narrow = var.getDefiningOp<ConvertOp>();
  mlir::Value d64 = narrow ? MeanSquareOperand(narrow.getInputs()[0]) : nullptr;
  auto sub64 = d64 ? d64.getDefiningOp<SubOp>() : SubOp();
  auto wide = sub64 ? sub64.getInputs()[0].getDefiningOp<ConvertOp>() : ConvertOp();
  return wide && wide.getInputs()[0] == x &&
         IsMeanOverLast(sub64.getInputs()[1], wide.getResult(0));
}

// add(multiply(multiply(d, B(rsqrt(add(var, B(eps))))), B(g)), B(b)) with
// d = x - B(mean(x)), var the variance of x (IsVarianceOf), over the last
// dimension, becomes brt.layer_norm(x, g, b).
struct AddToLayerNorm : mlir::OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(AddOp add, mlir::PatternRewriter& rewriter) const override {
    mlir::Value x, scale, shift;
    double eps = 0;
    auto normalized = [&](mlir::Value v) {  // multiply(d, B(rsqrt(var + eps)))
      return Commuted(v.getDefiningOp<MulOp>(), [&](mlir::Value d, mlir::Value r) {
        auto sub = d.getDefiningOp<SubOp>();
        auto rsqrt = StripBroadcasts(r).getDefiningOp<RsqrtOp>();
        const int64_t rank = TypeOf(d).getRank();
        if (!sub || !rsqrt || !RestoresReducedDims(r, rank, rank - 1)) return false;
        return Commuted(rsqrt.getInputs()[0].getDefiningOp<AddOp>(),
                        [&](mlir::Value var, mlir::Value e) {
                          auto eps_value = ScalarConstant(e);
                          if (!eps_value || !IsVarianceOf(var, sub.getInputs()[0], d)) return false;
                          if (!IsMeanOverLast(sub.getInputs()[1], sub.getInputs()[0])) return false;
                          x = sub.getInputs()[0], eps = *eps_value;
                          return true;
                        });
      });
    };
    auto is_vector = [&](mlir::Value v) {  // an f32 vector along x's last dim (set by normalized)
      auto t = TypeOf(StripBroadcasts(v));
      return t.getRank() == 1 && t.getElementType().isF32() &&
             BroadcastsOnto(v, {TypeOf(x).getRank() - 1});
    };
    const bool matched = Commuted(add, [&](mlir::Value scaled, mlir::Value b) {
      return Commuted(scaled.getDefiningOp<MulOp>(), [&](mlir::Value n, mlir::Value g) {
        if (!normalized(n) || !is_vector(g) || !is_vector(b)) return false;
        scale = StripBroadcasts(g), shift = StripBroadcasts(b);
        return true;
      });
    });
    // x's last dim is static (IsMeanOverLast), so the vectors' sizes compare as numbers.
    if (!matched || TypeOf(x) != TypeOf(add.getResult(0)) || !TypeOf(x).getElementType().isF32() ||
        TypeOf(scale).getShape()[0] != TypeOf(x).getShape().back() ||
        TypeOf(shift) != TypeOf(scale))
      return mlir::failure();
    rewriter.setInsertionPoint(add);
    auto fused =
        LayerNormOp::create(rewriter, add.getLoc(), mlir::TypeRange{add.getResult(0).getType()},
                            mlir::ValueRange{x, scale, shift}, rewriter.getF64FloatAttr(eps));
    rewriter.replaceOp(add, fused.getResults());
    return mlir::success();
  }
};

struct FuseLayerNormPass : impl::FuseLayerNormBase<FuseLayerNormPass> {
  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<AddToLayerNorm>(ctx);
    patterns_ = std::move(set);
    return mlir::success();
  }

  void runOnOperation() override { mlir::walkAndApplyPatterns(getOperation(), patterns_); }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

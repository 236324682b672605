// brt-fold-batch-norm: batch norm in inference after a convolution with
// constant weights, as PyTorch and JAX export it --
// (conv - mean) * rsqrt(var + eps) * gamma + beta, or any chain of adds,
// subtracts, multiplies and divides by per-output-feature vectors or scalars
// -- becomes the convolution with its weights scaled per output feature,
// then one add of a per-feature shift (which brt-fuse-epilogues takes as the
// convolution's bias). The scale and shift are ops on the [C] vectors, and the
// scaled weights a multiply of the constant weights: brt-fold-constants,
// run again after this pass, evaluates them, so nothing of batch norm is
// left to run.
#include <optional>

#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FOLDBATCHNORM
#include "passes/Passes.h.inc"

namespace {

// Whether v is computed from constants only (the folded weights would
// otherwise be a weight-sized multiply every run).
bool FromConstants(mlir::Value v) {
  auto k = v.getDefiningOp<BrtOp>();
  return k && llvm::all_of(k.getInputs(), FromConstants);
}

// Whether conv's weights can take a scale: conv is used once, on floats,
// with constant weights and its output feature dims named.
bool Foldable(ConvolutionOp conv) {
  return conv->hasOneUse() &&
         mlir::isa<mlir::FloatType>(TypeOf(conv.getResult(0)).getElementType()) &&
         conv.getInputs()[1].getDefiningOp<ConstantOp>() && conv.getOutputFeatureDimensionAttr() &&
         conv.getKernelOutputFeatureDimensionAttr();
}

// Whether `other` applies per output feature of conv: computed from constants
// in conv's element type, and a per-feature vector or a scalar, broadcast.
bool PerFeature(ConvolutionOp conv, mlir::Value other) {
  return TypeOf(other).getElementType() == TypeOf(conv.getResult(0)).getElementType() &&
         FromConstants(other) &&
         (FindOutputFeatureVector(conv, other) || TypeOf(StripBroadcasts(other)).getRank() == 0);
}

// An op of conv's chain, and its operand that is not the chain so far.
struct Link {
  BrtOp op;
  mlir::Value other;
};

// The chain after conv: each op the only user of the one before (conv
// first), an add or multiply by a per-feature operand on either side, or a
// subtract or divide of the chain so far by one.
llvm::SmallVector<Link> Chain(ConvolutionOp conv) {
  llvm::SmallVector<Link> chain;
  mlir::Operation* last = conv;
  while (last->hasOneUse()) {
    auto k = mlir::dyn_cast<BrtOp>(*last->getUsers().begin());
    if (!k || k.getInputs().size() != 2) break;
    const int side = k.getInputs()[0] == last->getResult(0) ? 0 : 1;
    const bool commutes = mlir::isa<AddOp, MulOp>(k);
    if ((side == 1 && !commutes) || (!commutes && !mlir::isa<SubOp, DivOp>(k))) break;
    const mlir::Value other = k.getInputs()[1 - side];
    if (!PerFeature(conv, other)) break;
    chain.push_back({k, other});
    last = k;
  }
  return chain;
}

// A foldable convolution and its chain.
struct BatchNorm {
  ConvolutionOp conv;
  llvm::SmallVector<Link> chain;
};

// The foldable convolution whose chain ends at `last`, looked for back from
// `k` (last, then the ops before it) through the single-use adds, subtracts,
// multiplies and divides a chain can hold, on the sides a chain can take.
std::optional<BatchNorm> ChainEndingAt(BrtOp last, BrtOp k) {
  for (int side : {0, 1}) {
    if (side == 1 && !mlir::isa<AddOp, MulOp>(k)) break;
    mlir::Operation* before = k.getInputs()[side].getDefiningOp();
    if (!before || !before->hasOneUse()) continue;
    if (auto conv = mlir::dyn_cast<ConvolutionOp>(before)) {
      if (!Foldable(conv)) continue;
      BatchNorm found{conv, Chain(conv)};
      if (!found.chain.empty() && found.chain.back().op == last) return found;
    } else if (mlir::isa<AddOp, SubOp, MulOp, DivOp>(before)) {
      if (std::optional<BatchNorm> found = ChainEndingAt(last, mlir::cast<BrtOp>(before)))
        return found;
    }
  }
  return std::nullopt;
}

// out = x * scale + shift, built up one op of the chain at a time; a null
// scale is 1, a null shift 0.
struct Affine {
  mlir::Value scale, shift;
};

// bn's chain, which scales the convolution, becomes the convolution of
// scaled weights and one add of the shift, made before the chain's last op.
void Fold(const BatchNorm& bn, mlir::PatternRewriter& rewriter) {
  ConvolutionOp conv = bn.conv;
  const mlir::Type element = TypeOf(conv.getResult(0)).getElementType();
  const int64_t features = TypeOf(conv.getResult(0)).getDimSize(conv.getOutputFeatureDimension());
  const auto vector_type = mlir::RankedTensorType::get({features}, element);
  // An op of `kind` (the kind of an op of the chain, or negate) on [C] vectors.
  auto op = [&](llvm::StringRef kind, mlir::ValueRange operands) {
    return CreateOp(rewriter, conv.getLoc(), kind, mlir::TypeRange{vector_type}, operands, {})
        ->getResult(0);
  };
  // The per-feature vector (a scalar broadcast to one) `other` applies.
  auto per_feature = [&](mlir::Value other) {
    if (mlir::Value v = OutputFeatureVector(rewriter, conv, other)) return v;
    return BroadcastScalar(rewriter, conv.getLoc(), StripBroadcasts(other), vector_type);
  };
  Affine a;
  for (auto [k, other] : bn.chain) {
    rewriter.setInsertionPoint(k);  // where c and the chain so far are defined
    const mlir::Value c = per_feature(other);
    const llvm::StringRef kind = k.getKind();
    if (mlir::isa<AddOp, SubOp>(k)) {
      a.shift = a.shift               ? op(kind, {a.shift, c})
                : mlir::isa<AddOp>(k) ? c
                                      : op(NegateOp::kKind, {c});
    } else {
      if (!a.scale && mlir::isa<DivOp>(k)) {
        const auto scalar = mlir::RankedTensorType::get({}, element);
        auto one = ConstantOp::create(
            rewriter, conv.getLoc(), mlir::TypeRange{scalar}, mlir::ValueRange{},
            mlir::DenseElementsAttr::get(scalar, rewriter.getFloatAttr(element, 1.0)));
        a.scale = BroadcastScalar(rewriter, conv.getLoc(), one.getResult(0), vector_type);
      }
      a.scale = a.scale ? op(kind, {a.scale, c}) : c;
      if (a.shift) a.shift = op(kind, {a.shift, c});
    }
  }
  BrtOp last = bn.chain.back().op;
  rewriter.setInsertionPoint(last);
  const mlir::Location loc = last->getLoc();
  const mlir::Value weights = conv.getInputs()[1];
  auto broadcast = [&](mlir::Value v, mlir::Type type, uint64_t dim) {
    return BroadcastInDimOp::create(rewriter, loc, mlir::TypeRange{type}, mlir::ValueRange{v},
                                    llvm::ArrayRef<int64_t>{static_cast<int64_t>(dim)})
        .getResult(0);
  };
  mlir::Value scaled =
      MulOp::create(rewriter, loc, mlir::TypeRange{weights.getType()},
                    mlir::ValueRange{weights, broadcast(a.scale, weights.getType(),
                                                        conv.getKernelOutputFeatureDimension())})
          .getResult(0);
  mlir::Value out = ConvolutionOp::create(
                        rewriter, loc, mlir::TypeRange{conv.getResult(0).getType()},
                        mlir::ValueRange{conv.getInputs()[0], scaled}, conv.getParams().getValue())
                        .getResult(0);
  if (a.shift)
    out = AddOp::create(rewriter, loc, mlir::TypeRange{out.getType()},
                        mlir::ValueRange{out, broadcast(a.shift, out.getType(),
                                                        conv.getOutputFeatureDimension())})
              .getResult(0);
  rewriter.replaceOp(last, out);
  for (const Link& l : llvm::reverse(llvm::ArrayRef<Link>(bn.chain).drop_back()))
    rewriter.eraseOp(l.op);
  rewriter.eraseOp(conv);
}

// The chain that ends at the root op folds, if it scales the convolution.
// Rooted at the chain's last op, which follows the rest: the walk steps past
// the op it visits before rewriting it, so a pattern may erase that op and
// ops before it, never ops after it.
template <typename LastOp>
struct FoldChain : mlir::OpRewritePattern<LastOp> {
  using mlir::OpRewritePattern<LastOp>::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(LastOp last_op,
                                      mlir::PatternRewriter& rewriter) const override {
    auto last = mlir::cast<BrtOp>(last_op.getOperation());
    const std::optional<BatchNorm> bn = ChainEndingAt(last, last);
    // No scale to fold: a bias alone is brt-fuse-epilogues' to take.
    if (!bn ||
        llvm::none_of(bn->chain, [](const Link& l) { return mlir::isa<MulOp, DivOp>(l.op); }))
      return mlir::failure();
    Fold(*bn, rewriter);
    return mlir::success();
  }
};

struct FoldBatchNormPass : impl::FoldBatchNormBase<FoldBatchNormPass> {
  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<FoldChain<AddOp>, FoldChain<SubOp>, FoldChain<MulOp>, FoldChain<DivOp>>(ctx);
    patterns_ = std::move(set);
    return mlir::success();
  }

  void runOnOperation() override { mlir::walkAndApplyPatterns(getOperation(), patterns_); }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

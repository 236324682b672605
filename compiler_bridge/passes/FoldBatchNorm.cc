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
#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

struct FoldBatchNormPass : impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    llvm::SmallVector<ConvolutionOp> convolutions;
    getOperation().walk([&](ConvolutionOp conv) {
      if (conv->hasOneUse() &&
          mlir::isa<mlir::FloatType>(TypeOf(conv.getResult(0)).getElementType()) &&
          conv.getInputs()[1].getDefiningOp<ConstantOp>())
        convolutions.push_back(conv);
    });
    for (ConvolutionOp conv : convolutions) Fold(conv);
  }

  // out = x * scale + shift, built up one op of the chain at a time; a null
  // scale is 1, a null shift 0.
  struct Affine {
    mlir::Value scale, shift;
  };

  static void Fold(ConvolutionOp conv) {
    if (!conv.getOutputFeatureDimensionAttr() || !conv.getKernelOutputFeatureDimensionAttr())
      return;
    const mlir::Type element = TypeOf(conv.getResult(0)).getElementType();
    const int64_t features = TypeOf(conv.getResult(0)).getDimSize(conv.getOutputFeatureDimension());
    const auto vector_type = mlir::RankedTensorType::get({features}, element);
    mlir::OpBuilder b(conv);
    llvm::SmallVector<mlir::Operation*> made;  // erased again if nothing folds
    // An op of `kind` (the kind of an op of the chain, or negate) on [C] vectors.
    auto op = [&](llvm::StringRef kind, mlir::ValueRange operands) {
      mlir::Operation* k =
          CreateOp(b, conv.getLoc(), kind, mlir::TypeRange{vector_type}, operands, {});
      made.push_back(k);
      return k->getResult(0);
    };
    // The per-feature vector (a scalar broadcast to one) `other` applies.
    auto per_feature = [&](mlir::Value other) -> mlir::Value {
      if (TypeOf(other).getElementType() != element || !FromConstants(other)) return nullptr;
      if (mlir::Value v = OutputFeatureVector(b, conv, other)) {
        // A value found on the way is read by its broadcast; a reshape the
        // lookup made is read by nothing yet.
        if (v.use_empty()) made.push_back(v.getDefiningOp());
        return v;
      }
      mlir::Value scalar = StripBroadcasts(other);
      if (TypeOf(scalar).getRank() != 0) return nullptr;
      mlir::Value v = BroadcastScalar(b, conv.getLoc(), scalar, vector_type);
      made.push_back(v.getDefiningOp());
      return v;
    };
    Affine a;
    mlir::Operation* last = conv;
    llvm::SmallVector<mlir::Operation*> chain;
    while (last->hasOneUse()) {
      auto k = mlir::dyn_cast<BrtOp>(*last->getUsers().begin());
      if (!k || k.getInputs().size() != 2) break;
      const int side = k.getInputs()[0] == last->getResult(0) ? 0 : 1;
      const llvm::StringRef kind = k.getKind();
      const bool commutes = mlir::isa<AddOp, MulOp>(k);
      if ((side == 1 && !commutes) || (!commutes && !mlir::isa<SubOp, DivOp>(k))) break;
      b.setInsertionPoint(k);  // where c and the chain so far are defined
      mlir::Value c = per_feature(k.getInputs()[1 - side]);
      if (!c) break;
      if (mlir::isa<AddOp, SubOp>(k)) {
        a.shift = a.shift               ? op(kind, {a.shift, c})
                  : mlir::isa<AddOp>(k) ? c
                                        : op(NegateOp::kKind, {c});
      } else {
        if (!a.scale && mlir::isa<DivOp>(k)) {
          const auto scalar = mlir::RankedTensorType::get({}, element);
          auto one = ConstantOp::create(
              b, conv.getLoc(), mlir::TypeRange{scalar}, mlir::ValueRange{},
              mlir::DenseElementsAttr::get(scalar, b.getFloatAttr(element, 1.0)));
          made.push_back(one);
          a.scale = BroadcastScalar(b, conv.getLoc(), one.getResult(0), vector_type);
          made.push_back(a.scale.getDefiningOp());
        }
        a.scale = a.scale ? op(kind, {a.scale, c}) : c;
        if (a.shift) a.shift = op(kind, {a.shift, c});
      }
      chain.push_back(k);
      last = k;
    }
    if (!a.scale) {  // no scale to fold: a bias alone is brt-fuse-epilogues' to take
      for (mlir::Operation* m : llvm::reverse(made)) m->erase();
      return;
    }
    b.setInsertionPoint(last);
    const mlir::Location loc = last->getLoc();
    const mlir::Value weights = conv.getInputs()[1];
    auto broadcast = [&](mlir::Value v, mlir::Type type, uint64_t dim) {
      return BroadcastInDimOp::create(b, loc, mlir::TypeRange{type}, mlir::ValueRange{v},
                                      llvm::ArrayRef<int64_t>{static_cast<int64_t>(dim)})
          .getResult(0);
    };
    mlir::Value scaled =
        MulOp::create(b, loc, mlir::TypeRange{weights.getType()},
                      mlir::ValueRange{weights, broadcast(a.scale, weights.getType(),
                                                          conv.getKernelOutputFeatureDimension())})
            .getResult(0);
    mlir::Value out = ConvolutionOp::create(b, loc, mlir::TypeRange{conv.getResult(0).getType()},
                                            mlir::ValueRange{conv.getInputs()[0], scaled},
                                            conv.getParams().getValue())
                          .getResult(0);
    if (a.shift)
      out = AddOp::create(b, loc, mlir::TypeRange{out.getType()},
                          mlir::ValueRange{out, broadcast(a.shift, out.getType(),
                                                          conv.getOutputFeatureDimension())})
                .getResult(0);
    last->getResult(0).replaceAllUsesWith(out);
    for (mlir::Operation* k : llvm::reverse(chain)) k->erase();
    conv->erase();
  }
};

}  // namespace
}  // namespace brt::bridge

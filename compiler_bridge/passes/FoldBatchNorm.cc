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
  auto k = v.getDefiningOp<KernelOp>();
  return k && llvm::all_of(k.getInputs(), FromConstants);
}

struct FoldBatchNormPass : impl::FoldBatchNormBase<FoldBatchNormPass> {
  void runOnOperation() override {
    llvm::SmallVector<KernelOp> convolutions;
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() == "convolution" && k->hasOneUse() &&
          mlir::isa<mlir::FloatType>(TypeOf(k.getResult(0)).getElementType()) &&
          Kernel(k.getInputs()[1], "constant"))
        convolutions.push_back(k);
    });
    for (KernelOp conv : convolutions) Fold(conv);
  }

  // out = x * scale + shift, built up one op of the chain at a time; a null
  // scale is 1, a null shift 0.
  struct Affine {
    mlir::Value scale, shift;
  };

  static void Fold(KernelOp conv) {
    auto feature_dim = conv.getParams().getAs<mlir::IntegerAttr>("output_feature_dimension");
    if (!feature_dim || !conv.getParams().get("kernel_output_feature_dimension")) return;
    const mlir::Type element = TypeOf(conv.getResult(0)).getElementType();
    const int64_t features = TypeOf(conv.getResult(0)).getDimSize(feature_dim.getInt());
    const auto vector_type = mlir::RankedTensorType::get({features}, element);
    mlir::OpBuilder b(conv);
    llvm::SmallVector<mlir::Operation*> made;  // erased again if nothing folds
    auto op = [&](llvm::StringRef kind, mlir::ValueRange operands) {
      KernelOp k = KernelOp::create(b, conv.getLoc(), mlir::TypeRange{vector_type},
                                    b.getStringAttr(kind), operands, b.getDictionaryAttr({}));
      made.push_back(k);
      return k.getResult(0);
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
    KernelOp last = conv;
    llvm::SmallVector<KernelOp> chain;
    while (last->hasOneUse()) {
      auto k = mlir::dyn_cast<KernelOp>(*last->getUsers().begin());
      if (!k || k.getInputs().size() != 2) break;
      const int side = k.getInputs()[0] == last.getResult(0) ? 0 : 1;
      const llvm::StringRef kind = k.getKind();
      const bool commutes = kind == "add" || kind == "multiply";
      if ((side == 1 && !commutes) || (!commutes && kind != "subtract" && kind != "divide")) break;
      b.setInsertionPoint(k);  // where c and the chain so far are defined
      mlir::Value c = per_feature(k.getInputs()[1 - side]);
      if (!c) break;
      if (kind == "add" || kind == "subtract") {
        a.shift = a.shift ? op(kind, {a.shift, c}) : kind == "add" ? c : op("negate", {c});
      } else {
        if (!a.scale && kind == "divide") {
          auto one = KernelOp::create(
              b, conv.getLoc(), mlir::TypeRange{mlir::RankedTensorType::get({}, element)},
              b.getStringAttr("constant"), mlir::ValueRange{},
              b.getDictionaryAttr({b.getNamedAttr(
                  "value", mlir::DenseElementsAttr::get(mlir::RankedTensorType::get({}, element),
                                                        b.getFloatAttr(element, 1.0)))}));
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
    const mlir::Location loc = last.getLoc();
    const mlir::Value weights = conv.getInputs()[1];
    auto broadcast = [&](mlir::Value v, mlir::Type type, llvm::StringRef dim_param) {
      const int64_t dim = conv.getParams().getAs<mlir::IntegerAttr>(dim_param).getInt();
      return KernelOp::create(b, loc, mlir::TypeRange{type}, b.getStringAttr("broadcast_in_dim"),
                              mlir::ValueRange{v},
                              b.getDictionaryAttr({b.getNamedAttr("broadcast_dimensions",
                                                                  b.getDenseI64ArrayAttr({dim}))}))
          .getResult(0);
    };
    mlir::Value scaled =
        KernelOp::create(b, loc, mlir::TypeRange{weights.getType()}, b.getStringAttr("multiply"),
                         mlir::ValueRange{weights, broadcast(a.scale, weights.getType(),
                                                             "kernel_output_feature_dimension")},
                         b.getDictionaryAttr({}))
            .getResult(0);
    mlir::Value out =
        KernelOp::create(b, loc, mlir::TypeRange{conv.getResult(0).getType()}, conv.getKindAttr(),
                         mlir::ValueRange{conv.getInputs()[0], scaled}, conv.getParams())
            .getResult(0);
    if (a.shift)
      out =
          KernelOp::create(
              b, loc, mlir::TypeRange{out.getType()}, b.getStringAttr("add"),
              mlir::ValueRange{out, broadcast(a.shift, out.getType(), "output_feature_dimension")},
              b.getDictionaryAttr({}))
              .getResult(0);
    last.getResult(0).replaceAllUsesWith(out);
    for (KernelOp k : llvm::reverse(chain)) k->erase();
    conv->erase();
  }
};

}  // namespace
}  // namespace brt::bridge

// brt-fuse-epilogues: a bias add and relu/tanh/gelu after dot_general or
// convolution fold into brt.matmul / brt.conv.
#include "BrtDialect.h"
#include "OpKinds.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Passes.h.inc"

namespace {

// dot_general -> add(B(bias)) -> maximum(., 0) | tanh | exact GELU, each the
// single user of the previous, where the bias covers the rhs free dims ->
// brt.matmul.
struct FuseEpiloguesPass : impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  // The bias `other` adds to `producer`'s result, seen through its broadcasts:
  // for dot_general it must cover the rhs free dims (trailing), for a
  // convolution the output feature dim. nullptr if it does not.
  static mlir::Value BiasOf(KernelOp producer, mlir::Value other) {
    if (TypeOf(other).getElementType() != TypeOf(producer.getResult(0)).getElementType())
      return nullptr;
    const auto out_shape = TypeOf(producer.getResult(0)).getShape();
    if (producer.getKind() == "dot_general") {
      auto contract =
          producer.getParams().getAs<mlir::DenseI64ArrayAttr>("rhs_contracting_dimensions");
      auto batch = producer.getParams().getAs<mlir::DenseI64ArrayAttr>("rhs_batching_dimensions");
      const int64_t rhs_free = TypeOf(producer.getInputs()[1]).getRank() -
                               static_cast<int64_t>(contract ? contract.size() : 0) -
                               static_cast<int64_t>(batch ? batch.size() : 0);
      mlir::Value src = other;
      while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
      const auto bias_shape = TypeOf(src).getShape();
      return rhs_free > 0 && static_cast<int64_t>(bias_shape.size()) == rhs_free &&
                     bias_shape == out_shape.take_back(rhs_free)
                 ? src
                 : nullptr;
    }
    auto feature = producer.getParams().getAs<mlir::IntegerAttr>("output_feature_dimension");
    if (!feature) return nullptr;
    // Follow where the feature dim comes from through each broadcast.
    int64_t pos = feature.getInt();
    mlir::Value src = other;
    while (KernelOp b = Kernel(src, "broadcast_in_dim")) {
      auto dims = b.getParams().getAs<mlir::DenseI64ArrayAttr>("broadcast_dimensions");
      const auto it = dims ? llvm::find(dims.asArrayRef(), pos) : nullptr;
      if (!dims || it == dims.asArrayRef().end()) return nullptr;
      pos = it - dims.asArrayRef().begin();
      src = b.getInputs()[0];
    }
    return TypeOf(src).getRank() == 1 && pos == 0 &&
                   TypeOf(src).getShape()[0] == out_shape[feature.getInt()]
               ? src
               : nullptr;
  }

  // Exact GELU of h, as JAX lowers it after the erfc decomposition:
  // multiply(multiply(h, 0.5), subtract(1, erf(multiply(negate(h), 1/sqrt(2))))).
  // Returns its ops in order (the last is the result), or nothing.
  static llvm::SmallVector<KernelOp> MatchGeluErf(mlir::Value h) {
    if (!llvm::hasNItems(h.getUsers(), 2)) return {};
    KernelOp half, neg;
    for (mlir::Operation* u : h.getUsers()) {
      auto k = mlir::dyn_cast<KernelOp>(u);
      if (k && k.getKind() == "negate") neg = k;
      if (k && k.getKind() == "multiply") half = k;
    }
    if (!half || !neg) return {};
    mlir::Value half_c = half.getInputs()[0] == h ? half.getInputs()[1] : half.getInputs()[0];
    if (ScalarConstant(half_c) != 0.5) return {};
    KernelOp scale = OnlyUser(neg);
    if (!scale || scale.getKind() != "multiply") return {};
    auto c = ScalarConstant(scale.getInputs()[0] == neg.getResult(0) ? scale.getInputs()[1]
                                                                     : scale.getInputs()[0]);
    if (!c || std::abs(*c - 0.70710678118654752) > 1e-6) return {};
    KernelOp erf = OnlyUser(scale);
    KernelOp one_minus = erf && erf.getKind() == "erf" ? OnlyUser(erf) : KernelOp();
    if (!one_minus || one_minus.getKind() != "subtract" ||
        one_minus.getInputs()[1] != erf.getResult(0) ||
        ScalarConstant(one_minus.getInputs()[0]) != 1.0)
      return {};
    KernelOp out = OnlyUser(one_minus);
    if (!out || out.getKind() != "multiply" || OnlyUser(half) != out) return {};
    return {half, neg, scale, erf, one_minus, out};
  }

  static KernelOp OnlyUser(KernelOp k) {
    mlir::Value v = k.getResult(0);
    return v.hasOneUse() ? mlir::dyn_cast<KernelOp>(*v.getUsers().begin()) : KernelOp();
  }

  void runOnOperation() override {
    llvm::SmallVector<KernelOp> producers;  // matmuls and convolutions
    getOperation().walk([&](KernelOp k) {
      if ((k.getKind() == "dot_general" || k.getKind() == "convolution") &&
          mlir::isa<mlir::FloatType>(TypeOf(k.getResult(0)).getElementType()))
        producers.push_back(k);
    });
    for (KernelOp dot : producers) {
      KernelOp last = dot;
      llvm::SmallVector<KernelOp, 3> chain = {dot};
      mlir::Value bias;
      if (KernelOp add = OnlyUser(dot); add && add.getKind() == "add") {
        mlir::Value other =
            add.getInputs()[0] == dot.getResult(0) ? add.getInputs()[1] : add.getInputs()[0];
        if ((bias = BiasOf(dot, other))) last = add, chain.push_back(add);
      }
      llvm::StringRef activation = "none";
      if (llvm::SmallVector<KernelOp> gelu = MatchGeluErf(last.getResult(0)); !gelu.empty()) {
        activation = "gelu", last = gelu.back();
        chain.append(gelu.begin(), gelu.end());
      } else if (KernelOp act = OnlyUser(last)) {
        if (act.getKind() == "tanh") {
          activation = "tanh", last = act, chain.push_back(act);
        } else if (act.getKind() == "maximum") {
          mlir::Value other =
              act.getInputs()[0] == last.getResult(0) ? act.getInputs()[1] : act.getInputs()[0];
          if (ScalarConstant(other) == 0.0) activation = "relu", last = act, chain.push_back(act);
        }
      }
      if (last == dot) continue;
      mlir::OpBuilder b(last);
      mlir::NamedAttrList params(dot.getParams());
      params.set("activation", b.getStringAttr(activation));
      llvm::SmallVector<mlir::Value> inputs(dot.getInputs().begin(), dot.getInputs().end());
      if (bias) inputs.push_back(bias);
      auto fused = KernelOp::create(
          b, last.getLoc(), mlir::TypeRange{last.getResult(0).getType()},
          b.getStringAttr(dot.getKind() == "dot_general" ? "brt.matmul" : "brt.conv"), inputs,
          params.getDictionary(b.getContext()));
      last.getResult(0).replaceAllUsesWith(fused.getResult(0));
      // Each op of the chain was the single user of the one before it.
      for (KernelOp k : llvm::reverse(chain)) k->erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

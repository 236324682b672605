// brt-fuse-epilogues: a bias add and relu (StableHLO's or PyTorch's)/tanh/gelu
// after dot_general or convolution fold into brt.matmul / brt.conv.
#include <cmath>

#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Passes.h.inc"

namespace {

// dot_general -> add(B(bias)) -> maximum(., 0) | select(. < 0, 0, .) | tanh |
// exact GELU, each the single user of the previous, where the bias covers the
// rhs free dims -> brt.matmul.
struct FuseEpiloguesPass : impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  using FuseEpiloguesBase::FuseEpiloguesBase;

  // The bias `other` adds to `producer`'s result, seen through its broadcasts:
  // for dot_general it must cover the rhs free dims (trailing), for a
  // convolution the output feature dim. nullptr if it does not.
  static mlir::Value BiasOf(mlir::OpBuilder& b, mlir::Operation* producer, mlir::Value other) {
    if (TypeOf(other).getElementType() != TypeOf(producer->getResult(0)).getElementType())
      return nullptr;
    const auto out_shape = TypeOf(producer->getResult(0)).getShape();
    if (auto dot = mlir::dyn_cast<DotGeneralOp>(producer)) {
      const int64_t rhs_free =
          TypeOf(dot.getInputs()[1]).getRank() -
          static_cast<int64_t>(dot.getRhsContractingDimensions().size()) -
          static_cast<int64_t>(
              dot.getRhsBatchingDimensions().value_or(llvm::ArrayRef<int64_t>{}).size());
      mlir::Value src = other;
      while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
      // Leading unit dims ([1, n], a folded reshape of the bias) are dropped.
      const auto bias_shape = TypeOf(src).getShape();
      const int64_t extra = static_cast<int64_t>(bias_shape.size()) - rhs_free;
      if (rhs_free <= 0 || extra < 0 ||
          bias_shape.take_back(rhs_free) != out_shape.take_back(rhs_free) ||
          llvm::any_of(bias_shape.take_front(extra), [](int64_t d) { return d != 1; }))
        return nullptr;
      if (extra == 0) return src;
      return Reshape(b, src.getLoc(), src, bias_shape.take_back(rhs_free));
    }
    return OutputFeatureVector(b, mlir::cast<ConvolutionOp>(producer), other);
  }

  // Exact GELU of h, as JAX lowers it,
  //   multiply(multiply(h, 0.5), erfc(multiply(negate(h), 1/sqrt(2)))),
  // the same with subtract(1, erf(...)) for the erfc,
  // or as PyTorch writes it,
  //   multiply(add(erf(multiply(h, 1/sqrt(2))), 1), multiply(h, 0.5)).
  // Returns its ops in order (the last is the result), or nothing.
  static llvm::SmallVector<mlir::Operation*> MatchGeluErf(mlir::Value h) {
    if (!llvm::hasNItems(h.getUsers(), 2)) return {};
    auto constant_operand = [](mlir::Operation* k, mlir::Value v) {
      return ScalarConstant(k->getOperand(0) == v ? k->getOperand(1) : k->getOperand(0));
    };
    auto is_rsqrt2 = [](std::optional<double> c) {
      return c && std::abs(*c - 0.70710678118654752) < 1e-6;
    };
    NegateOp neg;
    MulOp half, scale;
    for (mlir::Operation* u : h.getUsers()) {
      if (auto k = mlir::dyn_cast<NegateOp>(u)) neg = k;
      if (auto k = mlir::dyn_cast<MulOp>(u)) {
        const std::optional<double> c = constant_operand(k, h);
        if (c == 0.5)
          half = k;
        else if (is_rsqrt2(c))
          scale = k;
      }
    }
    if (!half || !(neg || scale)) return {};
    if (neg) {
      scale = OnlyUser<MulOp>(neg);
      if (!scale || !is_rsqrt2(constant_operand(scale, neg.getResult(0)))) return {};
    }
    mlir::Operation* erf = OnlyUser(scale);
    if (neg && mlir::isa_and_nonnull<ErfcOp>(erf)) {
      auto out = OnlyUser<MulOp>(erf);
      if (!out || OnlyUser(half) != out) return {};
      return {half, neg, scale, erf, out};
    }
    mlir::Operation* one = mlir::isa_and_nonnull<ErfOp>(erf) ? OnlyUser(erf) : nullptr;
    if (!one) return {};
    const bool negated = neg != nullptr;
    if (negated ? !mlir::isa<SubOp>(one) || one->getOperand(1) != erf->getResult(0)
                : !mlir::isa<AddOp>(one))
      return {};
    if (constant_operand(one, erf->getResult(0)) != 1.0) return {};
    auto out = OnlyUser<MulOp>(one);
    if (!out || OnlyUser(half) != out) return {};
    if (negated) return {half, neg, scale, erf, one, out};
    return {half, scale, erf, one, out};
  }

  // Whether v is +0 (a -0 would be the result of relu for negative inputs).
  static bool IsPositiveZero(mlir::Value v) {
    const std::optional<double> c = ScalarConstant(v);
    return c == 0.0 && !std::signbit(*c);
  }

  // PyTorch's relu as brt.compile_torch writes it, select(compare(v, 0, LT),
  // +0, v) (-0 and NaN pass through): its compare and select, or nothing.
  static llvm::SmallVector<mlir::Operation*> MatchReluSelect(mlir::Value v) {
    if (!llvm::hasNItems(v.getUsers(), 2)) return {};
    CompareOp compare;
    for (mlir::Operation* u : v.getUsers())
      if (auto k = mlir::dyn_cast<CompareOp>(u)) compare = k;
    if (!compare || compare.getInputs()[0] != v || !ScalarConstant(compare.getInputs()[1]) ||
        *ScalarConstant(compare.getInputs()[1]) != 0.0 || compare.getComparisonDirection() != "LT")
      return {};
    auto select = OnlyUser<SelectOp>(compare);
    if (!select || select.getInputs()[0] != compare.getResult(0) ||
        !IsPositiveZero(select.getInputs()[1]) || select.getInputs()[2] != v)
      return {};
    return {compare, select};
  }

  // The activation applied to v (relu as maximum(v, +0) or as PyTorch's
  // select, tanh or exact GELU) and its ops in order, the last giving the
  // result; "none" and no ops if there is none.
  static std::pair<llvm::StringRef, llvm::SmallVector<mlir::Operation*>> MatchActivation(
      mlir::Value v) {
    if (llvm::SmallVector<mlir::Operation*> gelu = MatchGeluErf(v); !gelu.empty())
      return {"gelu", gelu};
    if (llvm::SmallVector<mlir::Operation*> relu = MatchReluSelect(v); !relu.empty())
      return {"relu_select", relu};
    if (mlir::Operation* k = OnlyUser(v.getDefiningOp())) {
      if (mlir::isa<TanhOp>(k)) return {"tanh", {k}};
      if (mlir::isa<MaxOp>(k) && IsPositiveZero(k->getOperand(k->getOperand(0) == v ? 1 : 0)))
        return {"relu", {k}};
    }
    return {"none", {}};
  }

  // Whether the target has a kernel for the fused op in this element type:
  // the CPU's brt.matmul takes f32, f16 and bf16, CUDA's any float; brt.conv
  // takes f32 and bf16 on the CPU, also f16 on CUDA. (An f64 matmul fused
  // for the CPU wrote an executable that did not load.)
  bool Fusable(mlir::Operation* producer, mlir::Type element) const {
    if (!mlir::isa<mlir::FloatType>(element)) return false;
    if (element.isF32() || element.isBF16()) return true;
    if (mlir::isa<DotGeneralOp>(producer)) return element.isF16() || target != "cpu";
    return element.isF16() && target != "cpu";
  }

  // The single user of op's result, of whatever op; null if it has several.
  static mlir::Operation* OnlyUser(mlir::Operation* op) {
    mlir::Value v = op->getResult(0);
    return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
  }

  // The single user of op's result if it is an Op; null otherwise.
  template <typename Op>
  static Op OnlyUser(mlir::Operation* op) {
    return mlir::dyn_cast_or_null<Op>(OnlyUser(op));
  }

  // brt.matmul or brt.conv (for dot_general or convolution `producer`) of
  // `inputs`, with producer's attributes and `activation`, at b's insertion
  // point.
  static mlir::Value MakeFused(mlir::OpBuilder& b, mlir::Location loc, mlir::Type type,
                               mlir::Operation* producer, mlir::ValueRange inputs,
                               llvm::StringRef activation) {
    mlir::StringAttr act = b.getStringAttr(activation);
    if (auto dot = mlir::dyn_cast<DotGeneralOp>(producer))
      return MatmulOp::create(
                 b, loc, mlir::TypeRange{type}, inputs, dot.getLhsContractingDimensionsAttr(),
                 dot.getRhsContractingDimensionsAttr(), dot.getLhsBatchingDimensionsAttr(),
                 dot.getRhsBatchingDimensionsAttr(), act)
          .getResult(0);
    auto conv = mlir::cast<ConvolutionOp>(producer);
    return ConvOp::create(
               b, loc, mlir::TypeRange{type}, inputs, conv.getWindowStridesAttr(),
               conv.getPaddingAttr(), conv.getLhsDilationAttr(), conv.getRhsDilationAttr(),
               conv.getFeatureGroupCountAttr(), conv.getBatchGroupCountAttr(),
               conv.getInputBatchDimensionAttr(), conv.getInputFeatureDimensionAttr(),
               conv.getInputSpatialDimensionsAttr(), conv.getKernelOutputFeatureDimensionAttr(),
               conv.getKernelInputFeatureDimensionAttr(), conv.getKernelSpatialDimensionsAttr(),
               conv.getOutputBatchDimensionAttr(), conv.getOutputFeatureDimensionAttr(),
               conv.getOutputSpatialDimensionsAttr(), act)
        .getResult(0);
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::Operation*> producers;  // matmuls and convolutions
    getOperation().walk([&](mlir::Operation* op) {
      if (mlir::isa<DotGeneralOp, ConvolutionOp>(op) &&
          Fusable(op, TypeOf(op->getResult(0)).getElementType()))
        producers.push_back(op);
    });
    for (mlir::Operation* dot : producers) {
      mlir::Operation* last = dot;
      llvm::SmallVector<mlir::Operation*, 3> chain = {dot};
      mlir::Value bias;
      if (auto add = OnlyUser<AddOp>(dot)) {
        mlir::Value other =
            add.getInputs()[0] == dot->getResult(0) ? add.getInputs()[1] : add.getInputs()[0];
        mlir::OpBuilder b(add);
        if ((bias = BiasOf(b, dot, other))) last = add, chain.push_back(add);
      }
      // The activation may follow a reshape of the sum (PyTorch's linear on
      // [b, s, k] is a matmul of [b * s, k]): the fused op then keeps the
      // sum's shape and the reshape moves after it.
      const mlir::Type sum_type = last->getResult(0).getType();
      auto [activation, act] = MatchActivation(last->getResult(0));
      ReshapeOp reshape;
      if (auto r = OnlyUser<ReshapeOp>(last); act.empty() && r) {
        std::tie(activation, act) = MatchActivation(r.getResult(0));
        if (!act.empty()) reshape = r, chain.push_back(r);
      }
      if (!act.empty()) chain.append(act.begin(), act.end()), last = act.back();
      if (last == dot) continue;
      mlir::OpBuilder b(last);
      llvm::SmallVector<mlir::Value> inputs(dot->getOperands());
      if (bias) inputs.push_back(bias);
      mlir::Value fused = MakeFused(b, last->getLoc(), sum_type, dot, inputs, activation);
      if (reshape) fused = Reshape(b, last->getLoc(), fused, TypeOf(last->getResult(0)).getShape());
      last->getResult(0).replaceAllUsesWith(fused);
      // Each op of the chain was the single user of the one before it.
      for (mlir::Operation* k : llvm::reverse(chain)) k->erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

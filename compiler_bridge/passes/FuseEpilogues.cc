// brt-fuse-epilogues: a bias add and relu (StableHLO's or PyTorch's)/tanh/gelu
// after dot_general or convolution fold into brt.matmul / brt.conv.
#include <cmath>

#include "BrtDialect.h"
#include "OpKinds.h"
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
  static mlir::Value BiasOf(mlir::OpBuilder& b, KernelOp producer, mlir::Value other) {
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
    return OutputFeatureVector(b, producer, other);
  }

  // Exact GELU of h, as JAX lowers it,
  //   multiply(multiply(h, 0.5), erfc(multiply(negate(h), 1/sqrt(2)))),
  // the same with subtract(1, erf(...)) for the erfc,
  // or as PyTorch writes it,
  //   multiply(add(erf(multiply(h, 1/sqrt(2))), 1), multiply(h, 0.5)).
  // Returns its ops in order (the last is the result), or nothing.
  static llvm::SmallVector<KernelOp> MatchGeluErf(mlir::Value h) {
    if (!llvm::hasNItems(h.getUsers(), 2)) return {};
    auto constant_operand = [](KernelOp k, mlir::Value v) {
      return ScalarConstant(k.getInputs()[0] == v ? k.getInputs()[1] : k.getInputs()[0]);
    };
    auto is_rsqrt2 = [](std::optional<double> c) {
      return c && std::abs(*c - 0.70710678118654752) < 1e-6;
    };
    KernelOp half, neg, scale;
    for (mlir::Operation* u : h.getUsers()) {
      auto k = mlir::dyn_cast<KernelOp>(u);
      if (k && k.getKind() == "negate") neg = k;
      if (k && k.getKind() == "multiply") {
        const std::optional<double> c = constant_operand(k, h);
        if (c == 0.5)
          half = k;
        else if (is_rsqrt2(c))
          scale = k;
      }
    }
    if (!half || !(neg || scale)) return {};
    if (neg) {
      scale = OnlyUser(neg);
      if (!scale || scale.getKind() != "multiply" ||
          !is_rsqrt2(constant_operand(scale, neg.getResult(0))))
        return {};
    }
    KernelOp erf = OnlyUser(scale);
    if (neg && erf && erf.getKind() == "erfc") {
      KernelOp out = OnlyUser(erf);
      if (!out || out.getKind() != "multiply" || OnlyUser(half) != out) return {};
      return {half, neg, scale, erf, out};
    }
    KernelOp one = erf && erf.getKind() == "erf" ? OnlyUser(erf) : KernelOp();
    if (!one) return {};
    const bool negated = neg != nullptr;
    if (negated ? one.getKind() != "subtract" || one.getInputs()[1] != erf.getResult(0)
                : one.getKind() != "add")
      return {};
    if (constant_operand(one, erf.getResult(0)) != 1.0) return {};
    KernelOp out = OnlyUser(one);
    if (!out || out.getKind() != "multiply" || OnlyUser(half) != out) return {};
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
  static llvm::SmallVector<KernelOp> MatchReluSelect(mlir::Value v) {
    if (!llvm::hasNItems(v.getUsers(), 2)) return {};
    KernelOp compare, select;
    for (mlir::Operation* u : v.getUsers())
      if (auto k = mlir::dyn_cast<KernelOp>(u); k && k.getKind() == "compare") compare = k;
    if (!compare || compare.getInputs()[0] != v || !ScalarConstant(compare.getInputs()[1]) ||
        *ScalarConstant(compare.getInputs()[1]) != 0.0 ||
        compare.getParams().getAs<mlir::StringAttr>("comparison_direction") !=
            mlir::StringAttr::get(compare.getContext(), "LT"))
      return {};
    select = OnlyUser(compare);
    if (!select || select.getKind() != "select" || select.getInputs()[0] != compare.getResult(0) ||
        !IsPositiveZero(select.getInputs()[1]) || select.getInputs()[2] != v)
      return {};
    return {compare, select};
  }

  // The activation applied to v (relu as maximum(v, +0) or as PyTorch's
  // select, tanh or exact GELU) and its ops in order, the last giving the
  // result; "none" and no ops if there is none.
  static std::pair<llvm::StringRef, llvm::SmallVector<KernelOp>> MatchActivation(mlir::Value v) {
    if (llvm::SmallVector<KernelOp> gelu = MatchGeluErf(v); !gelu.empty()) return {"gelu", gelu};
    if (llvm::SmallVector<KernelOp> relu = MatchReluSelect(v); !relu.empty())
      return {"relu_select", relu};
    if (KernelOp k = OnlyUser(v.getDefiningOp<KernelOp>())) {
      if (k.getKind() == "tanh") return {"tanh", {k}};
      if (k.getKind() == "maximum" && IsPositiveZero(k.getInputs()[k.getInputs()[0] == v ? 1 : 0]))
        return {"relu", {k}};
    }
    return {"none", {}};
  }

  // Whether the target has a kernel for the fused op in this element type:
  // the CPU's brt.matmul takes f32, f16 and bf16, CUDA's any float; brt.conv
  // takes f32 and bf16 on the CPU, also f16 on CUDA. (An f64 matmul fused
  // for the CPU wrote an executable that did not load.)
  bool Fusable(llvm::StringRef kind, mlir::Type element) const {
    if (!mlir::isa<mlir::FloatType>(element)) return false;
    if (element.isF32() || element.isBF16()) return true;
    if (kind == "dot_general") return element.isF16() || target != "cpu";
    return element.isF16() && target != "cpu";
  }

  static KernelOp OnlyUser(KernelOp k) {
    mlir::Value v = k.getResult(0);
    return v.hasOneUse() ? mlir::dyn_cast<KernelOp>(*v.getUsers().begin()) : KernelOp();
  }

  void runOnOperation() override {
    llvm::SmallVector<KernelOp> producers;  // matmuls and convolutions
    getOperation().walk([&](KernelOp k) {
      if ((k.getKind() == "dot_general" || k.getKind() == "convolution") &&
          Fusable(k.getKind(), TypeOf(k.getResult(0)).getElementType()))
        producers.push_back(k);
    });
    for (KernelOp dot : producers) {
      KernelOp last = dot;
      llvm::SmallVector<KernelOp, 3> chain = {dot};
      mlir::Value bias;
      if (KernelOp add = OnlyUser(dot); add && add.getKind() == "add") {
        mlir::Value other =
            add.getInputs()[0] == dot.getResult(0) ? add.getInputs()[1] : add.getInputs()[0];
        mlir::OpBuilder b(add);
        if ((bias = BiasOf(b, dot, other))) last = add, chain.push_back(add);
      }
      // The activation may follow a reshape of the sum (PyTorch's linear on
      // [b, s, k] is a matmul of [b * s, k]): the fused op then keeps the
      // sum's shape and the reshape moves after it.
      const mlir::Type sum_type = last.getResult(0).getType();
      auto [activation, act] = MatchActivation(last.getResult(0));
      KernelOp reshape;
      if (KernelOp r = OnlyUser(last); act.empty() && r && r.getKind() == "reshape") {
        std::tie(activation, act) = MatchActivation(r.getResult(0));
        if (!act.empty()) reshape = r, chain.push_back(r);
      }
      if (!act.empty()) chain.append(act.begin(), act.end()), last = act.back();
      if (last == dot) continue;
      mlir::OpBuilder b(last);
      mlir::NamedAttrList params(dot.getParams());
      params.set("activation", b.getStringAttr(activation));
      llvm::SmallVector<mlir::Value> inputs(dot.getInputs().begin(), dot.getInputs().end());
      if (bias) inputs.push_back(bias);
      mlir::Value fused =
          KernelOp::create(
              b, last.getLoc(), mlir::TypeRange{sum_type},
              b.getStringAttr(dot.getKind() == "dot_general" ? "brt.matmul" : "brt.conv"), inputs,
              params.getDictionary(b.getContext()))
              .getResult(0);
      if (reshape) fused = Reshape(b, last.getLoc(), fused, TypeOf(last.getResult(0)).getShape());
      last.getResult(0).replaceAllUsesWith(fused);
      // Each op of the chain was the single user of the one before it.
      for (KernelOp k : llvm::reverse(chain)) k->erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

// brt-fuse-epilogues: a bias add and relu (StableHLO's or PyTorch's)/tanh/gelu
// after dot_general or convolution fold into brt.matmul / brt.conv, and for
// the CPU a residual add after brt.conv into it.
#include <cmath>
#include <optional>

#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Passes.h.inc"

namespace {

// The single user of op's result, of whatever op; null if it has several.
mlir::Operation* OnlyUser(mlir::Operation* op) {
  mlir::Value v = op->getResult(0);
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

// The single user of op's result if it is an Op; null otherwise.
template <typename Op>
Op OnlyUser(mlir::Operation* op) {
  return mlir::dyn_cast_or_null<Op>(OnlyUser(op));
}

// The bias `other` adds to `producer`'s result, seen through its broadcasts:
// for dot_general it must cover the rhs free dims (trailing), for a
// convolution the output feature dim. nullptr if it does not. A reshape it
// needs is made at b's insertion point; nothing is made for a nullptr.
mlir::Value BiasOf(mlir::OpBuilder& b, mlir::Operation* producer, mlir::Value other) {
  if (TypeOf(other).getElementType() != TypeOf(producer->getResult(0)).getElementType())
    return nullptr;
  if (auto dot = mlir::dyn_cast<DotGeneralOp>(producer)) {
    const int64_t rhs_free =
        TypeOf(dot.getInputs()[1]).getRank() -
        static_cast<int64_t>(dot.getRhsContractingDimensions().size()) -
        static_cast<int64_t>(
            dot.getRhsBatchingDimensions().value_or(llvm::ArrayRef<int64_t>{}).size());
    mlir::Value src = other;
    while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
    // Leading unit dims ([1, n], a folded reshape of the bias) are dropped.
    const std::optional<llvm::SmallVector<SymDim>> bias_shape = SymbolicShape(src.getType());
    const std::optional<llvm::SmallVector<SymDim>> out_shape =
        SymbolicShape(producer->getResult(0).getType());
    if (!bias_shape || !out_shape) return nullptr;
    const llvm::ArrayRef<SymDim> bias(*bias_shape), out(*out_shape);
    const int64_t extra = static_cast<int64_t>(bias.size()) - rhs_free;
    if (rhs_free <= 0 || extra < 0 || bias.take_back(rhs_free) != out.take_back(rhs_free) ||
        llvm::any_of(bias.take_front(extra), [](const SymDim& d) { return d != 1; }))
      return nullptr;
    if (extra == 0) return src;
    return Reshape(b, src.getLoc(), src, bias.take_back(rhs_free));
  }
  return OutputFeatureVector(b, mlir::cast<ConvolutionOp>(producer), other);
}

// Exact GELU of h, as JAX lowers it,
//   multiply(multiply(h, 0.5), erfc(multiply(negate(h), 1/sqrt(2)))),
// the same with subtract(1, erf(...)) for the erfc,
// or as PyTorch writes it,
//   multiply(add(erf(multiply(h, 1/sqrt(2))), 1), multiply(h, 0.5)).
// Returns its ops in order (the last is the result), or nothing.
llvm::SmallVector<mlir::Operation*> MatchGeluErf(mlir::Value h) {
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
bool IsPositiveZero(mlir::Value v) {
  const std::optional<double> c = ScalarConstant(v);
  return c == 0.0 && !std::signbit(*c);
}

// PyTorch's relu as brt.compile_torch writes it, select(compare(v, 0, LT),
// +0, v) (-0 and NaN pass through): its compare and select, or nothing.
llvm::SmallVector<mlir::Operation*> MatchReluSelect(mlir::Value v) {
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
std::pair<llvm::StringRef, llvm::SmallVector<mlir::Operation*>> MatchActivation(mlir::Value v) {
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

// Whether the target (the CPU if `cpu`, else CUDA) has a kernel for the op
// `producer` fuses into, in its element type:
// the CPU's brt.matmul takes f32, f16 and bf16, CUDA's any float; brt.conv
// takes f32 and bf16 on the CPU, also f16 on CUDA. (An f64 matmul fused
// for the CPU wrote an executable that did not load.)
bool Fusable(mlir::Operation* producer, bool cpu) {
  const mlir::Type element = TypeOf(producer->getResult(0)).getElementType();
  if (!mlir::isa<mlir::FloatType>(element)) return false;
  if (element.isF32() || element.isBF16()) return true;
  if (mlir::isa<DotGeneralOp>(producer)) return element.isF16() || !cpu;
  return element.isF16() && !cpu;
}

// brt.matmul or brt.conv (for dot_general or convolution `producer`) of
// `inputs`, with producer's attributes and `activation`, at b's insertion
// point.
mlir::Value MakeFused(mlir::OpBuilder& b, mlir::Location loc, mlir::Type type,
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

// dot_general or convolution -> add(B(bias)) -> [reshape ->] maximum(., 0) |
// select(. < 0, 0, .) | tanh | exact GELU, without the add or without the
// activation (and its reshape) if need be, each the single user of the one
// before (the select's and GELU's first ops both read it), where the bias
// covers the rhs free dims (a convolution's output features). `chain` holds
// its ops in order, from the producer to the op that gives the result.
struct Epilogue {
  mlir::Operation* producer;
  AddOp add;          // adds the bias, or null
  ReshapeOp reshape;  // between the sum and the activation, or null
  llvm::StringRef activation;
  llvm::SmallVector<mlir::Operation*> chain;
};

// The epilogue after `producer`, if any; an add is taken as its bias add
// (Fuse checks the bias with BiasOf: without one nothing fuses, as the add,
// the producer's only user, starts no activation).
std::optional<Epilogue> MatchEpilogue(mlir::Operation* producer) {
  Epilogue e{producer, OnlyUser<AddOp>(producer), nullptr, "none", {producer}};
  if (e.add) e.chain.push_back(e.add);
  mlir::Operation* last = e.chain.back();
  // The activation may follow a reshape of the sum (PyTorch's linear on
  // [b, s, k] is a matmul of [b * s, k]): the fused op then keeps the
  // sum's shape and the reshape moves after it.
  auto [activation, act] = MatchActivation(last->getResult(0));
  if (auto r = OnlyUser<ReshapeOp>(last); act.empty() && r) {
    std::tie(activation, act) = MatchActivation(r.getResult(0));
    if (!act.empty()) e.reshape = r, e.chain.push_back(r);
  }
  e.activation = activation;
  e.chain.append(act.begin(), act.end());
  if (e.chain.back() == producer) return std::nullopt;
  return e;
}

// The values an activation that ends at `last` reads, as MatchActivation
// takes them: tanh's operand, either of maximum's, the select's third, the
// value GELU's last multiply halves.
llvm::SmallVector<mlir::Value> ActivationInputs(mlir::Operation* last) {
  if (mlir::isa<TanhOp>(last)) return {last->getOperand(0)};
  if (mlir::isa<MaxOp>(last)) return {last->getOperand(0), last->getOperand(1)};
  if (auto select = mlir::dyn_cast<SelectOp>(last)) return {select.getInputs()[2]};
  llvm::SmallVector<mlir::Value> halved;
  if (mlir::isa<MulOp>(last))
    for (mlir::Value x : last->getOperands())
      if (auto half = x.getDefiningOp<MulOp>()) llvm::append_range(halved, half->getOperands());
  return halved;
}

// The dot_generals and convolutions whose epilogue may end at `last`, in
// program order: those it adds a bias to, and those whose result, after a
// bias add and a reshape (each optional), its activation reads.
llvm::SmallVector<mlir::Operation*> ProducersBefore(mlir::Operation* last) {
  llvm::SmallVector<mlir::Operation*> producers;
  auto add_producer = [&](mlir::Value v) {
    mlir::Operation* k = v.getDefiningOp();
    if (mlir::isa_and_nonnull<DotGeneralOp, ConvolutionOp>(k) && !llvm::is_contained(producers, k))
      producers.push_back(k);
  };
  if (mlir::isa<AddOp>(last)) llvm::for_each(last->getOperands(), add_producer);
  for (mlir::Value v : ActivationInputs(last)) {
    if (auto r = v.getDefiningOp<ReshapeOp>()) v = r.getInputs()[0];
    if (auto add = v.getDefiningOp<AddOp>())
      llvm::for_each(add->getOperands(), add_producer);
    else
      add_producer(v);
  }
  llvm::sort(producers,
             [](mlir::Operation* a, mlir::Operation* b) { return a->isBeforeInBlock(b); });
  return producers;
}

// The epilogue becomes brt.matmul or brt.conv: the bias (reshaped before the
// add if it must be) and the fused op (and the reshape after it) are made
// before the chain's last op, which they replace; the rest of the chain goes.
// Fails, changing nothing, if the add's other operand is no bias.
mlir::LogicalResult Fuse(const Epilogue& e, mlir::PatternRewriter& rewriter) {
  mlir::Operation* producer = e.producer;
  AddOp add = e.add;
  llvm::SmallVector<mlir::Value> inputs(producer->getOperands());
  if (add) {
    mlir::Value other =
        add.getInputs()[0] == producer->getResult(0) ? add.getInputs()[1] : add.getInputs()[0];
    rewriter.setInsertionPoint(add);
    mlir::Value bias = BiasOf(rewriter, producer, other);  // makes nothing when null
    if (!bias) return mlir::failure();
    inputs.push_back(bias);
  }
  const mlir::Type sum_type = (add ? add.getOperation() : producer)->getResult(0).getType();
  mlir::Operation* last = e.chain.back();
  rewriter.setInsertionPoint(last);
  mlir::Value fused = MakeFused(rewriter, last->getLoc(), sum_type, producer, inputs, e.activation);
  if (e.reshape)
    fused =
        ReshapeOp::create(rewriter, last->getLoc(), mlir::TypeRange{last->getResult(0).getType()},
                          mlir::ValueRange{fused})
            .getResult(0);
  rewriter.replaceOp(last, fused);
  // Each op of the chain is used by later ones of it only.
  for (mlir::Operation* k : llvm::reverse(llvm::ArrayRef(e.chain).drop_back())) rewriter.eraseOp(k);
  return mlir::success();
}

// The epilogue that ends at a Last (a bias add or an activation's last op)
// fuses into its producer. Rooted at the chain's last op: the walk steps past
// the op it visits before rewriting it, so a pattern may erase that op and
// ops before it, never ops after it. Producers are tried in program order.
template <typename Last>
struct FuseEpilogueAt : mlir::OpRewritePattern<Last> {
  FuseEpilogueAt(mlir::MLIRContext* ctx, bool cpu) : mlir::OpRewritePattern<Last>(ctx), cpu(cpu) {}

  mlir::LogicalResult matchAndRewrite(Last last, mlir::PatternRewriter& rewriter) const override {
    for (mlir::Operation* producer : ProducersBefore(last)) {
      if (!Fusable(producer, cpu)) continue;
      const std::optional<Epilogue> e = MatchEpilogue(producer);
      if (e && e->chain.back() == last.getOperation() && mlir::succeeded(Fuse(*e, rewriter)))
        return mlir::success();
    }
    return mlir::failure();
  }

  bool cpu;
};

// A residual connection, add(brt.conv(x, w, bias), r) with r no broadcast,
// and the activation after it (if any) fold into brt.conv(x, w, bias,
// r) (the CPU's: oneDNN adds r as the convolution writes its result, where
// the add was a pass over memory of its own). Rooted at the chain's last op,
// like FuseEpilogueAt; runs after it, on the brt.conv it made.
template <typename Last>
struct FuseResidualAt : mlir::OpRewritePattern<Last> {
  using mlir::OpRewritePattern<Last>::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(Last last, mlir::PatternRewriter& rewriter) const override {
    llvm::SmallVector<mlir::Value> sums;
    if (mlir::isa<AddOp>(last))
      sums.push_back(last->getResult(0));
    else
      sums = ActivationInputs(last);
    for (mlir::Value sum : sums) {
      auto add = sum.getDefiningOp<AddOp>();
      if (!add) continue;
      auto [activation, act] = MatchActivation(sum);
      if (act.empty() ? add.getOperation() != last.getOperation() : act.back() != last) continue;
      for (int i = 0; i < 2; ++i) {
        auto conv = add.getInputs()[i].template getDefiningOp<ConvOp>();
        mlir::Value residual = add.getInputs()[1 - i];
        // A broadcast residual (a per-channel or time embedding) stays an
        // add, which reads it at its own size.
        if (!conv || conv->getNumOperands() != 3 || conv.getActivation() != "none" ||
            !conv->getResult(0).hasOneUse() || StripBroadcasts(residual) != residual)
          continue;
        llvm::SmallVector<mlir::Value> inputs(conv->getOperands());
        inputs.push_back(residual);
        mlir::NamedAttrList attrs(conv->getAttrDictionary());
        attrs.set("activation", rewriter.getStringAttr(activation));
        rewriter.setInsertionPoint(last);
        mlir::Operation* fused = ConvOp::create(
            rewriter, last->getLoc(), mlir::TypeRange{sum.getType()}, inputs, attrs.getAttrs());
        rewriter.replaceOp(last, fused->getResults());
        for (mlir::Operation* k : llvm::reverse(act))
          if (k != last.getOperation()) rewriter.eraseOp(k);
        if (add.getOperation() != last.getOperation()) rewriter.eraseOp(add);
        rewriter.eraseOp(conv);
        return mlir::success();
      }
    }
    return mlir::failure();
  }
};

struct FuseEpiloguesPass : impl::FuseEpiloguesBase<FuseEpiloguesPass> {
  using FuseEpiloguesBase::FuseEpiloguesBase;

  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<FuseEpilogueAt<AddOp>, FuseEpilogueAt<MaxOp>, FuseEpilogueAt<SelectOp>,
            FuseEpilogueAt<TanhOp>, FuseEpilogueAt<MulOp>>(ctx, target == "cpu");
    patterns_ = std::move(set);
    mlir::RewritePatternSet residual(ctx);
    residual.add<FuseResidualAt<AddOp>, FuseResidualAt<MaxOp>, FuseResidualAt<SelectOp>,
                 FuseResidualAt<TanhOp>, FuseResidualAt<MulOp>>(ctx);
    residual_patterns_ = std::move(residual);
    return mlir::success();
  }

  void runOnOperation() override {
    mlir::walkAndApplyPatterns(getOperation(), patterns_);
    if (target == "cpu") mlir::walkAndApplyPatterns(getOperation(), residual_patterns_);
  }

  mlir::FrozenRewritePatternSet patterns_, residual_patterns_;
};

}  // namespace
}  // namespace brt::bridge

// brt-simplify: removes the ops that change nothing and merges chains, as
// torch-mlir's decompositions leave them (addmm's `* 1.0` on the product and
// the bias, reshapes to the same shape, transposes that undo each other,
// unit dims added before a broadcast), so the fusion passes see the patterns
// they match. XLA's erf approximation, which torch-mlir writes out op by op
// (about 30 ops), becomes the erf op it computes. A select on a constant
// predicate is the operand it picks. A transpose of a matmul's result is
// the matmul with its operands swapped.
#include <array>

#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_SIMPLIFY
#include "passes/Passes.h.inc"

namespace {

// The other operand of multiply `k` when one of them is `v`, or null.
mlir::Value OtherOperand(MulOp k, mlir::Value v) {
  if (!k) return nullptr;
  if (k.getInputs()[0] == v) return k.getInputs()[1];
  return k.getInputs()[1] == v ? k.getInputs()[0] : nullptr;
}

// The coefficients, leading first, of a polynomial in `x` written the
// Horner way: ((c0 * x + c1) * x + c2) ... + cn, operands in either order.
llvm::SmallVector<double> HornerCoefficients(mlir::Value v, mlir::Value x) {
  llvm::SmallVector<double> reversed;
  for (;;) {
    auto add = v.getDefiningOp<AddOp>();
    if (!add) return {};
    std::optional<double> c = ScalarConstant(add.getInputs()[1]);
    mlir::Value product = add.getInputs()[0];
    if (!c) c = ScalarConstant(add.getInputs()[0]), product = add.getInputs()[1];
    if (!c) return {};
    reversed.push_back(*c);
    mlir::Value rest = OtherOperand(product.getDefiningOp<MulOp>(), x);
    if (!rest) return {};
    if (std::optional<double> lead = ScalarConstant(rest)) {
      reversed.push_back(*lead);
      return llvm::SmallVector<double>(llvm::reverse(reversed));
    }
    v = rest;
  }
}

bool Near(llvm::ArrayRef<double> got, llvm::ArrayRef<double> want) {
  if (got.size() != want.size()) return false;
  for (size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - want[i]) > 1e-6 * std::abs(want[i])) return false;
  return true;
}

// XLA's f32 erf (ErfImpl32), as chlo-to-stablehlo writes it:
//   c = clamp(-4, x, 4); z = c * c
//   clamp(-1, c * P(z) / Q(z), 1)
// with P, Q these coefficients. Returns x, or null.
mlir::Value ErfArgument(ClampOp k) {
  static constexpr std::array<double, 7> kP = {
      -2.72614225801306e-10, 2.77068142495902e-08,  -2.10102402082508e-06, -5.69250639462346e-05,
      -7.34990630326855e-04, -2.95459980854025e-03, -1.60960333262415e-02};
  static constexpr std::array<double, 5> kQ = {-1.45660718464996e-05, -2.13374055278905e-04,
                                               -1.68282697438203e-03, -7.37332916720468e-03,
                                               -1.42647390514189e-02};
  if (ScalarConstant(k.getInputs()[0]) != -1.0 || ScalarConstant(k.getInputs()[2]) != 1.0)
    return nullptr;
  auto ratio = k.getInputs()[1].getDefiningOp<DivOp>();
  auto numerator = ratio ? ratio.getInputs()[0].getDefiningOp<MulOp>() : MulOp();
  if (!numerator) return nullptr;
  for (int side = 0; side < 2; ++side) {
    auto clamped = numerator.getInputs()[side].getDefiningOp<ClampOp>();
    if (!clamped || ScalarConstant(clamped.getInputs()[0]) != -4.0 ||
        ScalarConstant(clamped.getInputs()[2]) != 4.0)
      continue;
    const mlir::Value c = clamped.getResult(0);
    // z = c * c is one of c's users.
    for (mlir::Operation* user : c.getUsers()) {
      auto z = mlir::dyn_cast<MulOp>(user);
      if (!z || z.getInputs()[0] != c || z.getInputs()[1] != c) continue;
      if (Near(HornerCoefficients(numerator.getInputs()[1 - side], z.getResult(0)), kP) &&
          Near(HornerCoefficients(ratio.getInputs()[1], z.getResult(0)), kQ))
        return clamped.getInputs()[1];
    }
  }
  return nullptr;
}

// A dot_general's batching dimensions: none when absent.
llvm::ArrayRef<int64_t> BatchingDims(std::optional<llvm::ArrayRef<int64_t>> dims) {
  return dims.value_or(llvm::ArrayRef<int64_t>());
}

// dot_general over batch dims along which the rhs is only broadcast (torch's
// bmm of a weight expanded to the batch: [b, m, k] x broadcast([k, n])) is
// one matmul of the unbroadcast rhs by the lhs rows; the result has the same
// layout when the lhs batch dims lead. Returns the unbatched op, made at b's
// insertion point, or null.
DotGeneralOp UnbroadcastDot(mlir::OpBuilder& b, DotGeneralOp k) {
  auto broadcast = k.getInputs()[1].getDefiningOp<BroadcastInDimOp>();
  if (!broadcast) return nullptr;
  const llvm::ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions(),
                                lb = BatchingDims(k.getLhsBatchingDimensions()),
                                rb = BatchingDims(k.getRhsBatchingDimensions()),
                                rc = k.getRhsContractingDimensions();
  if (lb.empty() || !IsIdentity(lb)) return nullptr;
  const mlir::Value source = broadcast.getInputs()[0];
  const std::optional<llvm::SmallVector<SymDim>> source_shape = SymbolicShape(source.getType());
  const std::optional<llvm::SmallVector<SymDim>> shape = SymbolicShape(k.getInputs()[1].getType());
  if (!source_shape || !shape) return nullptr;
  llvm::SmallVector<int64_t> contracting;
  int64_t last_free = -1;
  for (auto [j, d] : llvm::enumerate(dims)) {
    if (llvm::is_contained(rb, d) || (*source_shape)[j] != (*shape)[d]) return nullptr;
    if (!llvm::is_contained(rc, d)) {
      if (d < last_free) return nullptr;  // free dims would change order
      last_free = d;
    }
  }
  for (int64_t d : rc) {
    const auto* it = llvm::find(dims, d);
    if (it == dims.end()) return nullptr;
    contracting.push_back(it - dims.begin());
  }
  return DotGeneralOp::create(b, k.getLoc(), k->getResultTypes(),
                              mlir::ValueRange{k.getInputs()[0], source},
                              k.getLhsContractingDimensions(), contracting,
                              b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr({}));
}

// How many leading dims of its input the reshape making `v` merges into
// its dim 0 ([b, h, s, d] -> [b * h, s, d]: 2, also [b, 4, s, d] -> [4*b, s, d]),
// or 0 for any other value.
int64_t MergedLeadingDims(mlir::Value v) {
  auto r = v.getDefiningOp<ReshapeOp>();
  const std::optional<llvm::SmallVector<SymDim>> from_sizes =
      r ? SymbolicShape(r.getInputs()[0].getType()) : std::nullopt;
  const std::optional<llvm::SmallVector<SymDim>> to_sizes = SymbolicShape(v.getType());
  if (!from_sizes || !to_sizes) return 0;
  const llvm::ArrayRef<SymDim> from(*from_sizes), to(*to_sizes);
  const int64_t n = static_cast<int64_t>(from.size()) - static_cast<int64_t>(to.size()) + 1;
  if (n < 2 || to.empty() || from.drop_front(n) != to.drop_front(1)) return 0;
  SymDim product = 1;
  for (const SymDim& d : from.take_front(n)) product = product * d;
  return product == to[0] ? n : 0;
}

// dot_general over batch dim 0 of operands whose batch is n >= 2 merged
// leading dims [B1, ..., Bn] (attention heads: [b, h, s, d] -> [b * h, s, d])
// is the dot_general over those n batch dims, reshaped: a transpose that
// makes an operand can then fold into the dot. Both operands merge the same
// dims; or one merges those of a transpose and the other is split the same
// way (JAX's q @ k^T at batch 1 merges [1, h] on k^T's side only).
// Returns the replacement, made at builder's insertion point, or null.
mlir::Value UnmergeBatchDims(mlir::OpBuilder& builder, DotGeneralOp k) {
  if (BatchingDims(k.getLhsBatchingDimensions()) != llvm::ArrayRef<int64_t>{0} ||
      BatchingDims(k.getRhsBatchingDimensions()) != llvm::ArrayRef<int64_t>{0})
    return nullptr;
  const mlir::Value lhs = k.getInputs()[0], rhs = k.getInputs()[1];
  const int64_t n_lhs = MergedLeadingDims(lhs), n_rhs = MergedLeadingDims(rhs);
  const int64_t n = n_lhs ? n_lhs : n_rhs;
  const mlir::RankedTensorType out = TypeOf(k.getResult(0));
  const std::optional<llvm::SmallVector<SymDim>> out_sizes = SymbolicShape(out);
  const std::optional<llvm::SmallVector<SymDim>> lhs_sizes = SymbolicShape(lhs.getType());
  const std::optional<llvm::SmallVector<SymDim>> rhs_sizes = SymbolicShape(rhs.getType());
  if (!n || !out_sizes || !lhs_sizes || !rhs_sizes) return nullptr;
  auto source = [](mlir::Value merged) { return merged.getDefiningOp<ReshapeOp>().getInputs()[0]; };
  // The sizes of the dims a merging reshape merges (MergedLeadingDims read them).
  auto leading = [&](mlir::Value merged) {
    return llvm::SmallVector<SymDim>(
        llvm::ArrayRef(*SymbolicShape(source(merged).getType())).take_front(n));
  };
  const llvm::SmallVector<SymDim> batch_shape = leading(n_lhs ? lhs : rhs);
  const bool agree =
      n_lhs && n_rhs ? n_lhs == n_rhs && batch_shape == leading(rhs)
                     : static_cast<bool>(source(n_lhs ? lhs : rhs).getDefiningOp<TransposeOp>());
  if (!agree) return nullptr;
  // Each operand with its batch split: a merging reshape's input, or a new reshape.
  auto unmerged = [&](mlir::Value v, llvm::ArrayRef<SymDim> v_sizes, int64_t merged) {
    if (merged) return source(v);
    llvm::SmallVector<SymDim> shape(batch_shape);
    shape.append(v_sizes.begin() + 1, v_sizes.end());
    return Reshape(builder, k.getLoc(), v, shape);
  };
  const mlir::Value a = unmerged(lhs, *lhs_sizes, n_lhs), b = unmerged(rhs, *rhs_sizes, n_rhs);
  auto shifted = [&](llvm::ArrayRef<int64_t> dims) {
    llvm::SmallVector<int64_t> moved;
    for (int64_t d : dims) moved.push_back(d + n - 1);
    return moved;
  };
  const mlir::DenseI64ArrayAttr batch_dims =
      builder.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(0, n)));
  llvm::SmallVector<SymDim> shape(batch_shape);
  shape.append(out_sizes->begin() + 1, out_sizes->end());
  auto dot = DotGeneralOp::create(builder, k.getLoc(),
                                  mlir::TypeRange{SymbolicTensorType(shape, out.getElementType())},
                                  mlir::ValueRange{a, b}, shifted(k.getLhsContractingDimensions()),
                                  shifted(k.getRhsContractingDimensions()), batch_dims, batch_dims);
  return Reshape(builder, k.getLoc(), dot.getResult(0), *out_sizes);
}

// transpose(dot_general(a, b)) that swaps the blocks of lhs and rhs free
// dims is dot_general(b, a): JAX's backward writes a weight's gradient as
// x^T dy turned around. Not when b is a constant, whose matmul the runtime
// packs once. Returns the swapped op, made at b's insertion point, or null.
DotGeneralOp SwappedDot(mlir::OpBuilder& b, TransposeOp transpose) {
  auto dot = transpose.getInputs()[0].getDefiningOp<DotGeneralOp>();
  if (!dot || !dot->hasOneUse() || dot.getInputs()[1].getDefiningOp<ConstantOp>()) return nullptr;
  const llvm::ArrayRef<int64_t> perm = transpose.getPermutation(),
                                lb = BatchingDims(dot.getLhsBatchingDimensions()),
                                lc = dot.getLhsContractingDimensions();
  const int64_t batch = static_cast<int64_t>(lb.size()),
                lhs_free =
                    TypeOf(dot.getInputs()[0]).getRank() - batch - static_cast<int64_t>(lc.size()),
                rhs_free = static_cast<int64_t>(perm.size()) - batch - lhs_free;
  llvm::SmallVector<int64_t> swapped = llvm::to_vector(llvm::seq<int64_t>(0, batch));
  for (int64_t d = 0; d < rhs_free; ++d) swapped.push_back(batch + lhs_free + d);
  for (int64_t d = 0; d < lhs_free; ++d) swapped.push_back(batch + d);
  if (lhs_free == 0 || rhs_free == 0 || perm != llvm::ArrayRef<int64_t>(swapped)) return nullptr;
  // lhs and rhs dimension numbers trade places (an absent pair stays absent).
  return DotGeneralOp::create(
      b, dot.getLoc(), transpose->getResultTypes(),
      mlir::ValueRange{dot.getInputs()[1], dot.getInputs()[0]},
      dot.getRhsContractingDimensionsAttr(), dot.getLhsContractingDimensionsAttr(),
      dot.getRhsBatchingDimensionsAttr(), dot.getLhsBatchingDimensionsAttr());
}

// multiply(transpose(x), scalar) -> transpose(multiply(x, scalar)): the
// scaled value keeps x's layout, so the transpose can fold into a dot that
// reads it (PyTorch scales attention's q and k after splitting the heads).
// Returns the new transpose, made at b's insertion point, or null.
mlir::Value ScaleBeforeTranspose(mlir::OpBuilder& b, MulOp k) {
  for (int side = 0; side < 2; ++side) {
    auto t = k.getInputs()[side].getDefiningOp<TransposeOp>();
    const mlir::Value scale = k.getInputs()[1 - side];
    if (!t || !t->hasOneUse() || !ScalarConstant(scale)) continue;
    const mlir::Value x = t.getInputs()[0];
    mlir::Value scalar = StripBroadcasts(scale);
    if (TypeOf(scalar).getRank() != 0) continue;
    mlir::Value operands[2];
    operands[side] = x, operands[1 - side] = BroadcastScalar(b, k.getLoc(), scalar, x.getType());
    auto scaled = MulOp::create(b, k.getLoc(), mlir::TypeRange{x.getType()},
                                mlir::ValueRange{operands[0], operands[1]});
    return TransposeOp::create(b, k.getLoc(), mlir::TypeRange{k.getResult(0).getType()},
                               mlir::ValueRange{scaled.getResult(0)}, t.getPermutationAttr())
        .getResult(0);
  }
  return nullptr;
}

// Replaces the uses of op's result by `v`, or fails when v is null. The op
// stays until the pass's sweep after the walk, so the rest of the walk
// still counts it among its operands' users.
mlir::LogicalResult ReplaceUses(mlir::PatternRewriter& rewriter, mlir::Operation* op,
                                mlir::Value v) {
  if (!v) return mlir::failure();
  rewriter.replaceAllOpUsesWith(op, v);
  return mlir::success();
}

// A reshape to its operand's type is the operand; one of a reshape reads
// what that one reshapes.
struct SimplifyReshape : mlir::OpRewritePattern<ReshapeOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(ReshapeOp k, mlir::PatternRewriter& rewriter) const override {
    const mlir::Value in = k.getInputs()[0];
    if (in.getType() == k.getResult(0).getType()) return ReplaceUses(rewriter, k, in);
    auto inner = in.getDefiningOp<ReshapeOp>();
    if (!inner) return mlir::failure();
    rewriter.modifyOpInPlace(k, [&] { k->setOperand(0, inner.getInputs()[0]); });
    return mlir::success();
  }
};

// A convert to its operand's type is the operand.
struct SimplifyConvert : mlir::OpRewritePattern<ConvertOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(ConvertOp k, mlir::PatternRewriter& rewriter) const override {
    const mlir::Value in = k.getInputs()[0];
    return ReplaceUses(rewriter, k, in.getType() == k.getResult(0).getType() ? in : nullptr);
  }
};

// A select on a constant predicate (a lax.cond whose predicate folded, as
// one on an unrolled loop's counter does) is the operand it picks.
struct SimplifySelect : mlir::OpRewritePattern<SelectOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(SelectOp k, mlir::PatternRewriter& rewriter) const override {
    auto c = StripBroadcasts(k.getInputs()[0]).getDefiningOp<ConstantOp>();
    auto pred = c ? mlir::dyn_cast<mlir::DenseIntElementsAttr>(c.getValue()) : nullptr;
    if (!pred || !pred.isSplat() || !pred.getElementType().isInteger(1)) return mlir::failure();
    mlir::Value picked = k.getInputs()[pred.getSplatValue<bool>() ? 1 : 2];
    return ReplaceUses(rewriter, k,
                       picked.getType() == k.getResult(0).getType() ? picked : nullptr);
  }
};

// A broadcast that moves nothing is its operand. One of a reshape that only
// adds or drops unit dims before it (torch's keepdim reductions:
// [n, 12, 128] -> [n, 12, 128, 1]) broadcasts what the reshape reshapes.
struct SimplifyBroadcast : mlir::OpRewritePattern<BroadcastInDimOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(BroadcastInDimOp broadcast,
                                      mlir::PatternRewriter& rewriter) const override {
    const mlir::Value in = broadcast.getInputs()[0];
    const llvm::ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
    if (in.getType() == broadcast.getResult(0).getType() && IsIdentity(dims))
      return ReplaceUses(rewriter, broadcast, in);
    auto reshape = in.getDefiningOp<ReshapeOp>();
    if (!reshape) return mlir::failure();
    const std::optional<llvm::SmallVector<SymDim>> from =
        SymbolicShape(reshape.getInputs()[0].getType());
    const std::optional<llvm::SmallVector<SymDim>> to = SymbolicShape(in.getType());
    if (!from || !to) return mlir::failure();
    llvm::SmallVector<int64_t> mapped;  // per dim of `from`: its dim in `to`
    size_t j = 0;
    for (const SymDim& size : *from) {
      while (j < to->size() && (*to)[j] != size && (*to)[j] == 1) ++j;
      if (j == to->size() || (*to)[j] != size) return mlir::failure();
      mapped.push_back(dims[j++]);
    }
    for (; j < to->size(); ++j)
      if ((*to)[j] != 1) return mlir::failure();
    if (!llvm::is_sorted(mapped)) return mlir::failure();
    rewriter.modifyOpInPlace(broadcast, [&] {
      broadcast.setBroadcastDimensionsAttr(rewriter.getDenseI64ArrayAttr(mapped));
      broadcast->setOperand(0, reshape.getInputs()[0]);
    });
    return mlir::success();
  }
};

// A transpose that moves nothing is its operand, one of a matmul may be the
// matmul swapped (SwappedDot), and one of a transpose transposes what that
// one does by the two permutations composed.
struct SimplifyTranspose : mlir::OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(TransposeOp transpose,
                                      mlir::PatternRewriter& rewriter) const override {
    const mlir::Value in = transpose.getInputs()[0];
    const llvm::ArrayRef<int64_t> perm = transpose.getPermutation();
    if (IsIdentity(perm)) return ReplaceUses(rewriter, transpose, in);
    if (DotGeneralOp dot = SwappedDot(rewriter, transpose))
      return ReplaceUses(rewriter, transpose, dot.getResult(0));
    auto inner = in.getDefiningOp<TransposeOp>();
    if (!inner) return mlir::failure();
    // Result dim i is the inner result's dim perm[i], which is x's dim
    // inner_perm[perm[i]].
    const llvm::ArrayRef<int64_t> inner_perm = inner.getPermutation();
    llvm::SmallVector<int64_t> composed;
    for (int64_t d : perm) composed.push_back(inner_perm[d]);
    rewriter.modifyOpInPlace(transpose, [&] {
      transpose.setPermutationAttr(rewriter.getDenseI64ArrayAttr(composed));
      transpose->setOperand(0, inner.getInputs()[0]);
    });
    if (IsIdentity(composed)) rewriter.replaceAllOpUsesWith(transpose, inner.getInputs()[0]);
    return mlir::success();
  }
};

// XLA's erf approximation (ErfArgument) is the erf op.
struct SimplifyClamp : mlir::OpRewritePattern<ClampOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(ClampOp clamp,
                                      mlir::PatternRewriter& rewriter) const override {
    const mlir::Value out = clamp.getResult(0);
    if (!mlir::isa<mlir::FloatType>(TypeOf(out).getElementType())) return mlir::failure();
    const mlir::Value x = ErfArgument(clamp);
    if (!x) return mlir::failure();
    auto erf = ErfOp::create(rewriter, clamp.getLoc(), mlir::TypeRange{out.getType()},
                             mlir::ValueRange{x});
    return ReplaceUses(rewriter, clamp, erf.getResult(0));
  }
};

// A dot_general batched over a broadcast rhs (UnbroadcastDot), or over
// merged leading dims (UnmergeBatchDims).
struct SimplifyDot : mlir::OpRewritePattern<DotGeneralOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(DotGeneralOp dot,
                                      mlir::PatternRewriter& rewriter) const override {
    if (DotGeneralOp unbatched = UnbroadcastDot(rewriter, dot))
      return ReplaceUses(rewriter, dot, unbatched.getResult(0));
    return ReplaceUses(rewriter, dot, UnmergeBatchDims(rewriter, dot));
  }
};

// x * 1, 1 * x and x / 1 are x, NaN and infinities included. The other
// operand of multiply or divide `k` when operand `first` or a later one is a
// one (a divide's from 1 on: only its divisor), or null.
mlir::Value OtherThanOne(BrtOp k, int first) {
  for (int side = first; side < 2; ++side) {
    const mlir::Value other = k.getInputs()[1 - side];
    if (ScalarConstant(k.getInputs()[side]) == 1.0 && other.getType() == k->getResult(0).getType())
      return other;
  }
  return nullptr;
}

// A multiply of a transpose by a scalar scales first (ScaleBeforeTranspose);
// one by one is its other operand.
struct SimplifyMul : mlir::OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(MulOp k, mlir::PatternRewriter& rewriter) const override {
    if (mlir::Value moved = ScaleBeforeTranspose(rewriter, k))
      return ReplaceUses(rewriter, k, moved);
    return ReplaceUses(rewriter, k, OtherThanOne(k, 0));
  }
};

// A divide by one is its dividend.
struct SimplifyDiv : mlir::OpRewritePattern<DivOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(DivOp k, mlir::PatternRewriter& rewriter) const override {
    return ReplaceUses(rewriter, k, OtherThanOne(k, 1));
  }
};

// Whether a walk changed anything: every match replaces an op's uses or
// modifies an op in place, and the rewriter says so here.
struct ChangeListener final : mlir::RewriterBase::Listener {
  void notifyOperationModified(mlir::Operation*) override { changed = true; }
  void notifyOperationReplaced(mlir::Operation*, mlir::ValueRange) override { changed = true; }

  bool changed = false;
};

struct SimplifyPass : impl::SimplifyBase<SimplifyPass> {
  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<SimplifyReshape, SimplifyConvert, SimplifySelect, SimplifyBroadcast, SimplifyTranspose,
            SimplifyClamp, SimplifyDot, SimplifyMul, SimplifyDiv>(ctx);
    patterns_ = std::move(set);
    return mlir::success();
  }

  // One walk of the patterns and a sweep of the ops left unused, until a
  // walk changes nothing: each rewrite can make another possible.
  void runOnOperation() override {
    for (bool changed = true; changed;) {
      ChangeListener listener;
      mlir::walkAndApplyPatterns(getOperation(), patterns_, &listener);
      changed = listener.changed;
      // What no longer has users goes; canonicalize would too, but the
      // fusion passes that follow count users.
      llvm::SmallVector<BrtOp> ops;
      getOperation().walk([&](BrtOp k) { ops.push_back(k); });
      for (BrtOp k : llvm::reverse(ops))
        if (k->use_empty()) k->erase();
    }
  }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

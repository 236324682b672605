// brt-fuse-attention (--target=cpu): attention written out as dot_general
// (q, k) -> [scalar multiply or divide] -> [add of a mask] -> brt.softmax over
// the keys -> dot_general with v, each the single user of the one before,
// becomes one brt.attention. The CPU kernel keeps each block of scores in
// cache instead of writing the [.., Sq, Sk] matrix out and reading it back
// three times. Scalar multiplies of q and k (PyTorch scales both by d^-1/4)
// fold into its scale, a transpose of its result into its permutation.
#include <numeric>
#include <optional>

#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSEATTENTION
#include "passes/Passes.h.inc"

namespace {

bool IsF32(mlir::Value v) { return TypeOf(v).getElementType().isF32(); }

// v = x * c (either side) or x / c with a scalar constant c, v used once:
// x, and c folded into *scale. Else v itself.
mlir::Value StripScale(mlir::Value v, double* scale, llvm::SmallVector<mlir::Operation*>& dead) {
  mlir::Operation* k = v.getDefiningOp();
  if (!mlir::isa_and_nonnull<MulOp, DivOp>(k) || !k->hasOneUse()) return v;
  const bool divide = mlir::isa<DivOp>(k);
  for (int side : {1, 0}) {
    if (side == 0 && divide) break;
    const std::optional<double> c = ScalarConstant(k->getOperand(side));
    if (!c || (divide && *c == 0.0)) continue;
    *scale = divide ? *scale / *c : *scale * *c;
    dead.push_back(k);
    return k->getOperand(1 - side);
  }
  return v;
}

// v = [scalar *] dot_general, the dot used once: the dot, with the scale
// folded into *scale and the ops added to `dead`; else null, nothing changed.
DotGeneralOp ScaledDot(mlir::Value v, double* scale, llvm::SmallVector<mlir::Operation*>& dead) {
  double s = *scale;
  llvm::SmallVector<mlir::Operation*> ops;
  auto dot = StripScale(v, &s, ops).getDefiningOp<DotGeneralOp>();
  if (!dot || !dot->hasOneUse()) return nullptr;
  *scale = s;
  dead.append(ops.begin(), ops.end());
  dead.push_back(dot);
  return dot;
}

// The operand dims of a dot_general side: its batch dims, then its one free
// dim, then its one contracting dim; empty when it has more or fewer.
llvm::SmallVector<int64_t> SideDims(mlir::Value operand, llvm::ArrayRef<int64_t> batch,
                                    llvm::ArrayRef<int64_t> contracting) {
  const int64_t rank = TypeOf(operand).getRank();
  if (contracting.size() != 1 || rank != static_cast<int64_t>(batch.size()) + 2) return {};
  llvm::SmallVector<int64_t> dims(batch);
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(batch, d) && d != contracting[0]) dims.push_back(d);
  dims.push_back(contracting[0]);
  return dims;
}

// The attention that the dot_general `values` ends, as brt.attention takes
// it, and the ops it replaces.
struct Attention {
  SoftmaxOp softmax;
  mlir::Value q, k, v, mask;
  llvm::SmallVector<int64_t> q_dims, k_dims, v_dims;
  double scale = 1.0;
  // Erased once the attention replaces them.
  llvm::SmallVector<mlir::Operation*> dead;
};

// values = dot_general(brt.softmax over the keys of [scale *] dot_general(q,
// k) [+ mask], v), each the single user of the one before, all in f32.
std::optional<Attention> MatchAttention(DotGeneralOp values) {
  auto softmax = values.getInputs()[0].getDefiningOp<SoftmaxOp>();
  if (!softmax || !softmax->hasOneUse()) return std::nullopt;
  const int64_t rank = TypeOf(softmax.getResult(0)).getRank(), nb = rank - 2;
  const std::optional<uint64_t> axis = softmax.getAxis();
  if (rank < 2 || !axis || static_cast<int64_t>(*axis) != rank - 1) return std::nullopt;

  // The scores: [scale *] dot_general(q, k) [+ mask].
  Attention a{.softmax = softmax, .dead = {softmax}};
  const mlir::Value scores = softmax.getInputs()[0];
  DotGeneralOp dot = ScaledDot(scores, &a.scale, a.dead);
  if (auto add = scores.getDefiningOp<AddOp>(); !dot && add && add->hasOneUse()) {
    for (int side : {0, 1}) {
      if ((dot = ScaledDot(add.getInputs()[side], &a.scale, a.dead))) {
        a.mask = add.getInputs()[1 - side];
        a.dead.push_back(add);
        break;
      }
    }
  }
  if (!dot) return std::nullopt;
  a.q = StripScale(dot.getInputs()[0], &a.scale, a.dead);
  a.k = StripScale(dot.getInputs()[1], &a.scale, a.dead);
  a.v = values.getInputs()[1];
  const llvm::ArrayRef<int64_t> none;
  a.q_dims = SideDims(dot.getInputs()[0], dot.getLhsBatchingDimensions().value_or(none),
                      dot.getLhsContractingDimensions());
  a.k_dims = SideDims(dot.getInputs()[1], dot.getRhsBatchingDimensions().value_or(none),
                      dot.getRhsContractingDimensions());
  // The values: the probabilities' batch dims in order, contracting the keys.
  llvm::SmallVector<int64_t> p_batch(nb);
  std::iota(p_batch.begin(), p_batch.end(), 0);
  a.v_dims = SideDims(a.v, values.getRhsBatchingDimensions().value_or(none),
                      values.getRhsContractingDimensions());
  if (a.q_dims.empty() || a.k_dims.empty() || a.v_dims.empty() ||
      values.getLhsBatchingDimensions().value_or(none) != llvm::ArrayRef<int64_t>(p_batch) ||
      values.getLhsContractingDimensions() != llvm::ArrayRef<int64_t>{rank - 1})
    return std::nullopt;
  std::swap(a.v_dims[nb], a.v_dims[nb + 1]);  // free (features) before contracting (keys)
  if (!IsF32(a.q) || !IsF32(a.k) || !IsF32(a.v) || !IsF32(values.getResult(0)) ||
      (a.mask && !IsF32(a.mask)))
    return std::nullopt;
  return a;
}

// brt.attention of `a` in place of `last`: `values`, or the transpose of it
// that `permutation` folds in.
void ReplaceWithAttention(mlir::PatternRewriter& rewriter, DotGeneralOp values, Attention& a,
                          mlir::Operation* last, mlir::DenseI64ArrayAttr permutation) {
  rewriter.setInsertionPoint(values);
  if (a.mask) {  // read NumPy-aligned at its source, as the kernel broadcasts
    mlir::Value src = a.mask;
    while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
    if (src == a.mask) src = AlignInOrderBroadcast(rewriter, values.getLoc(), a.mask);
    a.mask = src ? src : a.mask;
  }
  if (last != values) a.dead.push_back(values);
  llvm::SmallVector<mlir::Value> inputs = {a.q, a.k, a.v};
  if (a.mask) inputs.push_back(a.mask);
  rewriter.setInsertionPoint(last);
  auto fused = AttentionOp::create(
      rewriter, last->getLoc(), mlir::TypeRange{last->getResult(0).getType()}, inputs,
      rewriter.getDenseI64ArrayAttr(a.q_dims), rewriter.getDenseI64ArrayAttr(a.k_dims),
      rewriter.getDenseI64ArrayAttr(a.v_dims), permutation, rewriter.getF64FloatAttr(a.scale),
      a.softmax.getZeroMaskedRowsAttr() ? rewriter.getI64IntegerAttr(1) : nullptr);
  rewriter.replaceOp(last, fused.getResults());
  // Erased once unused, users first: repeat until none goes.
  for (bool erased = true; erased;) {
    erased = false;
    for (mlir::Operation*& op : a.dead)
      if (op && op->use_empty()) rewriter.eraseOp(op), op = nullptr, erased = true;
  }
}

// The values dot_general becomes brt.attention, unless a transpose is its
// only user (TransposeToAttention's, at the transpose).
struct DotToAttention : mlir::OpRewritePattern<DotGeneralOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(DotGeneralOp values,
                                      mlir::PatternRewriter& rewriter) const override {
    if (values->hasOneUse() && mlir::isa<TransposeOp>(*values->getUsers().begin()))
      return mlir::failure();
    std::optional<Attention> a = MatchAttention(values);
    if (!a) return mlir::failure();
    ReplaceWithAttention(rewriter, values, *a, values, nullptr);
    return mlir::success();
  }
};

// A transpose of the values dot_general, its only user, becomes
// brt.attention with that permutation. Rooted at the transpose, which follows
// the dot: the walk steps past the op it visits before rewriting it, so a
// pattern may erase that op and ops before it, never ops after it.
struct TransposeToAttention : mlir::OpRewritePattern<TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(TransposeOp t,
                                      mlir::PatternRewriter& rewriter) const override {
    auto values = t.getInputs()[0].getDefiningOp<DotGeneralOp>();
    if (!values || !values->hasOneUse()) return mlir::failure();
    std::optional<Attention> a = MatchAttention(values);
    if (!a) return mlir::failure();
    ReplaceWithAttention(rewriter, values, *a, t, t.getPermutationAttr());
    return mlir::success();
  }
};

struct FuseAttentionPass : impl::FuseAttentionBase<FuseAttentionPass> {
  using FuseAttentionBase::FuseAttentionBase;

  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<DotToAttention, TransposeToAttention>(ctx);
    patterns_ = std::move(set);
    return mlir::success();
  }

  void runOnOperation() override {
    if (target != "cpu") return;  // brt.attention is the CPU provider's
    mlir::walkAndApplyPatterns(getOperation(), patterns_);
  }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

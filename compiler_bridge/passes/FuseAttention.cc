// brt-fuse-attention (--target=cpu): attention written out as dot_general
// (q, k) -> [scalar multiply or divide] -> [add of a mask] -> brt.softmax over
// the keys -> dot_general with v, each the single user of the one before,
// becomes one brt.attention. The CPU kernel keeps each block of scores in
// cache instead of writing the [.., Sq, Sk] matrix out and reading it back
// three times. Scalar multiplies of q and k (PyTorch scales both by d^-1/4)
// fold into its scale, a transpose of its result into its permutation.
#include <numeric>

#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

struct FuseAttentionPass : impl::FuseAttentionBase<FuseAttentionPass> {
  using FuseAttentionBase::FuseAttentionBase;

  void runOnOperation() override {
    if (target != "cpu") return;  // brt.attention is the CPU provider's
    llvm::SmallVector<SoftmaxOp> softmaxes;
    getOperation().walk([&](SoftmaxOp k) { softmaxes.push_back(k); });
    for (SoftmaxOp softmax : softmaxes) Fuse(softmax);
  }

  static void Fuse(SoftmaxOp softmax) {
    const int64_t rank = TypeOf(softmax.getResult(0)).getRank(), nb = rank - 2;
    const std::optional<uint64_t> axis = softmax.getAxis();
    if (rank < 2 || !axis || static_cast<int64_t>(*axis) != rank - 1 || !softmax->hasOneUse())
      return;
    auto values = mlir::dyn_cast<DotGeneralOp>(*softmax->getUsers().begin());
    if (!values || values.getInputs()[0] != softmax.getResult(0)) return;

    // The scores: [scale *] dot_general(q, k) [+ mask].
    llvm::SmallVector<mlir::Operation*> dead = {softmax};
    const mlir::Value scores = softmax.getInputs()[0];
    mlir::Value mask;
    double scale = 1.0;
    DotGeneralOp dot = ScaledDot(scores, &scale, dead);
    if (auto add = scores.getDefiningOp<AddOp>(); !dot && add && add->hasOneUse()) {
      for (int side : {0, 1}) {
        if ((dot = ScaledDot(add.getInputs()[side], &scale, dead))) {
          mask = add.getInputs()[1 - side];
          dead.push_back(add);
          break;
        }
      }
    }
    if (!dot) return;
    mlir::Value q = StripScale(dot.getInputs()[0], &scale, dead),
                k = StripScale(dot.getInputs()[1], &scale, dead), v = values.getInputs()[1];
    const llvm::ArrayRef<int64_t> none;
    const auto q_dims = SideDims(dot.getInputs()[0], dot.getLhsBatchingDimensions().value_or(none),
                                 dot.getLhsContractingDimensions());
    const auto k_dims = SideDims(dot.getInputs()[1], dot.getRhsBatchingDimensions().value_or(none),
                                 dot.getRhsContractingDimensions());
    // The values: the probabilities' batch dims in order, contracting the keys.
    llvm::SmallVector<int64_t> p_batch(nb);
    std::iota(p_batch.begin(), p_batch.end(), 0);
    auto v_dims = SideDims(v, values.getRhsBatchingDimensions().value_or(none),
                           values.getRhsContractingDimensions());
    if (q_dims.empty() || k_dims.empty() || v_dims.empty() ||
        values.getLhsBatchingDimensions().value_or(none) != llvm::ArrayRef<int64_t>(p_batch) ||
        values.getLhsContractingDimensions() != llvm::ArrayRef<int64_t>{rank - 1})
      return;
    std::swap(v_dims[nb], v_dims[nb + 1]);  // free (features) before contracting (keys)
    if (!IsF32(q) || !IsF32(k) || !IsF32(v) || !IsF32(values.getResult(0)) ||
        (mask && !IsF32(mask)))
      return;
    mlir::OpBuilder b(values);
    if (mask) {  // read NumPy-aligned at its source, as the kernel broadcasts
      mlir::Value src = mask;
      while (mlir::Value s = NumpyBroadcastSource(src)) src = s;
      if (src == mask) src = AlignInOrderBroadcast(b, values.getLoc(), mask);
      mask = src ? src : mask;
    }

    mlir::Operation* last = values;
    mlir::DenseI64ArrayAttr permutation;
    if (values->hasOneUse()) {
      if (auto t = mlir::dyn_cast<TransposeOp>(*values->getUsers().begin())) {
        permutation = t.getPermutationAttr();
        dead.push_back(values);
        last = t;
      }
    }
    llvm::SmallVector<mlir::Value> inputs = {q, k, v};
    if (mask) inputs.push_back(mask);
    b.setInsertionPoint(last);
    auto fused =
        AttentionOp::create(b, last->getLoc(), mlir::TypeRange{last->getResult(0).getType()},
                            inputs, b.getDenseI64ArrayAttr(q_dims), b.getDenseI64ArrayAttr(k_dims),
                            b.getDenseI64ArrayAttr(v_dims), permutation, b.getF64FloatAttr(scale),
                            softmax.getZeroMaskedRowsAttr() ? b.getI64IntegerAttr(1) : nullptr);
    last->getResult(0).replaceAllUsesWith(fused.getResult(0));
    last->erase();
    // Erased once unused, users first: repeat until none goes.
    for (bool erased = true; erased;) {
      erased = false;
      for (mlir::Operation*& op : dead)
        if (op && op->use_empty()) op->erase(), op = nullptr, erased = true;
    }
  }
};

}  // namespace
}  // namespace brt::bridge

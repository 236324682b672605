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
  auto k = v.getDefiningOp<KernelOp>();
  if (!k || !k->hasOneUse() || (k.getKind() != "multiply" && k.getKind() != "divide")) return v;
  for (int side : {1, 0}) {
    if (side == 0 && k.getKind() == "divide") break;
    const std::optional<double> c = ScalarConstant(k.getInputs()[side]);
    if (!c || (k.getKind() == "divide" && *c == 0.0)) continue;
    *scale = k.getKind() == "divide" ? *scale / *c : *scale * *c;
    dead.push_back(k);
    return k.getInputs()[1 - side];
  }
  return v;
}

// v = [scalar *] dot_general, the dot used once: the dot, with the scale
// folded into *scale and the ops added to `dead`; else null, nothing changed.
KernelOp ScaledDot(mlir::Value v, double* scale, llvm::SmallVector<mlir::Operation*>& dead) {
  double s = *scale;
  llvm::SmallVector<mlir::Operation*> ops;
  KernelOp dot = Kernel(StripScale(v, &s, ops), "dot_general");
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
    llvm::SmallVector<KernelOp> softmaxes;
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() == "brt.softmax") softmaxes.push_back(k);
    });
    for (KernelOp softmax : softmaxes) Fuse(softmax);
  }

  static void Fuse(KernelOp softmax) {
    const int64_t rank = TypeOf(softmax.getResult(0)).getRank(), nb = rank - 2;
    auto axis = softmax.getParams().getAs<mlir::IntegerAttr>("axis");
    if (rank < 2 || !axis || axis.getInt() != rank - 1 || !softmax->hasOneUse()) return;
    KernelOp values = mlir::dyn_cast<KernelOp>(*softmax->getUsers().begin());
    if (!values || values.getKind() != "dot_general" ||
        values.getInputs()[0] != softmax.getResult(0))
      return;

    // The scores: [scale *] dot_general(q, k) [+ mask].
    llvm::SmallVector<mlir::Operation*> dead = {softmax};
    const mlir::Value scores = softmax.getInputs()[0];
    mlir::Value mask;
    double scale = 1.0;
    KernelOp dot = ScaledDot(scores, &scale, dead);
    if (KernelOp add = Kernel(scores, "add"); !dot && add && add->hasOneUse()) {
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
    const auto q_dims = SideDims(dot.getInputs()[0], IntsParam(dot, "lhs_batching_dimensions"),
                                 IntsParam(dot, "lhs_contracting_dimensions"));
    const auto k_dims = SideDims(dot.getInputs()[1], IntsParam(dot, "rhs_batching_dimensions"),
                                 IntsParam(dot, "rhs_contracting_dimensions"));
    // The values: the probabilities' batch dims in order, contracting the keys.
    llvm::SmallVector<int64_t> p_batch(nb);
    std::iota(p_batch.begin(), p_batch.end(), 0);
    auto v_dims = SideDims(v, IntsParam(values, "rhs_batching_dimensions"),
                           IntsParam(values, "rhs_contracting_dimensions"));
    if (q_dims.empty() || k_dims.empty() || v_dims.empty() ||
        IntsParam(values, "lhs_batching_dimensions") != llvm::ArrayRef<int64_t>(p_batch) ||
        IntsParam(values, "lhs_contracting_dimensions") != llvm::ArrayRef<int64_t>{rank - 1})
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

    KernelOp last = values;
    llvm::SmallVector<mlir::NamedAttribute> params = {
        b.getNamedAttr("q_dims", b.getDenseI64ArrayAttr(q_dims)),
        b.getNamedAttr("k_dims", b.getDenseI64ArrayAttr(k_dims)),
        b.getNamedAttr("v_dims", b.getDenseI64ArrayAttr(v_dims)),
        b.getNamedAttr("scale", b.getF64FloatAttr(scale))};
    if (softmax.getParams().get("zero_masked_rows"))
      params.push_back(b.getNamedAttr("zero_masked_rows", b.getI64IntegerAttr(1)));
    if (values->hasOneUse()) {
      auto t = mlir::dyn_cast<KernelOp>(*values->getUsers().begin());
      if (t && t.getKind() == "transpose") {
        params.push_back(b.getNamedAttr("permutation", t.getParams().get("permutation")));
        dead.push_back(values);
        last = t;
      }
    }
    llvm::SmallVector<mlir::Value> inputs = {q, k, v};
    if (mask) inputs.push_back(mask);
    b.setInsertionPoint(last);
    auto fused =
        KernelOp::create(b, last.getLoc(), mlir::TypeRange{last.getResult(0).getType()},
                         b.getStringAttr("brt.attention"), inputs, b.getDictionaryAttr(params));
    last.getResult(0).replaceAllUsesWith(fused.getResult(0));
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

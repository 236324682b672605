// brt-simplify: removes the ops that change nothing and merges chains, as
// torch-mlir's decompositions leave them (addmm's `* 1.0` on the product and
// the bias, reshapes to the same shape, transposes that undo each other,
// unit dims added before a broadcast), so the fusion passes see the patterns
// they match.
#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_SIMPLIFY
#include "passes/Passes.h.inc"

namespace {

bool IsIdentity(llvm::ArrayRef<int64_t> dims) {
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// Makes `k` read `operand` with its integer list parameter `name` = `values`.
void Reread(KernelOp k, mlir::Value operand, llvm::StringRef name, llvm::ArrayRef<int64_t> values) {
  mlir::OpBuilder b(k);
  mlir::NamedAttrList params(k.getParams());
  params.set(name, b.getDenseI64ArrayAttr(values));
  k.setParamsAttr(params.getDictionary(b.getContext()));
  k->setOperand(0, operand);
}

// What `k` can be replaced by, or null. May instead rewrite `k` in place
// (reading through a chain) and set `changed`.
mlir::Value Simplified(KernelOp k, bool& changed) {
  if (k.getNumResults() != 1 || k.getInputs().empty()) return nullptr;
  const mlir::Value in = k.getInputs()[0], out = k.getResult(0);
  const llvm::StringRef kind = k.getKind();
  if (kind == "reshape" || kind == "convert") {
    if (in.getType() == out.getType()) return in;
    if (KernelOp inner = Kernel(in, "reshape"); inner && kind == "reshape") {
      k->setOperand(0, inner.getInputs()[0]);
      changed = true;
    }
    return nullptr;
  }
  if (kind == "broadcast_in_dim") {
    auto dims = k.getParams().getAs<mlir::DenseI64ArrayAttr>("broadcast_dimensions");
    if (!dims) return nullptr;
    if (in.getType() == out.getType() && IsIdentity(dims.asArrayRef())) return in;
    // A reshape that only adds or drops unit dims before it (torch's
    // keepdim reductions: [n, 12, 128] -> [n, 12, 128, 1]): broadcast what it
    // reshapes.
    KernelOp reshape = Kernel(in, "reshape");
    if (!reshape) return nullptr;
    auto from = TypeOf(reshape.getInputs()[0]).getShape(), to = TypeOf(in).getShape();
    llvm::SmallVector<int64_t> mapped;  // per dim of `from`: its dim in `to`
    size_t j = 0;
    for (int64_t size : from) {
      while (j < to.size() && to[j] != size && to[j] == 1) ++j;
      if (j == to.size() || to[j] != size) return nullptr;
      mapped.push_back(dims[j++]);
    }
    for (; j < to.size(); ++j)
      if (to[j] != 1) return nullptr;
    if (!llvm::is_sorted(mapped)) return nullptr;
    Reread(k, reshape.getInputs()[0], "broadcast_dimensions", mapped);
    changed = true;
    return nullptr;
  }
  if (kind == "transpose") {
    auto perm = k.getParams().getAs<mlir::DenseI64ArrayAttr>("permutation");
    if (!perm) return nullptr;
    if (IsIdentity(perm.asArrayRef())) return in;
    KernelOp inner = Kernel(in, "transpose");
    auto inner_perm =
        inner ? inner.getParams().getAs<mlir::DenseI64ArrayAttr>("permutation") : nullptr;
    if (!inner_perm) return nullptr;
    // Result dim i is the inner result's dim perm[i], which is x's dim
    // inner_perm[perm[i]].
    llvm::SmallVector<int64_t> composed;
    for (int64_t d : perm.asArrayRef()) composed.push_back(inner_perm[d]);
    Reread(k, inner.getInputs()[0], "permutation", composed);
    changed = true;
    return IsIdentity(composed) ? inner.getInputs()[0] : nullptr;
  }
  // x * 1 and x / 1 are x, NaN and infinities included.
  if ((kind == "multiply" || kind == "divide") && k.getInputs().size() == 2) {
    for (int side = kind == "multiply" ? 0 : 1; side < 2; ++side) {
      const mlir::Value other = k.getInputs()[1 - side];
      if (ScalarConstant(k.getInputs()[side]) == 1.0 && other.getType() == out.getType())
        return other;
    }
  }
  return nullptr;
}

struct SimplifyPass : impl::SimplifyBase<SimplifyPass> {
  void runOnOperation() override {
    for (bool changed = true; changed;) {
      changed = false;
      getOperation().walk([&](KernelOp k) {
        if (mlir::Value replacement = Simplified(k, changed)) {
          k.getResult(0).replaceAllUsesWith(replacement);
          changed = true;
        }
      });
      // What no longer has users goes; canonicalize would too, but the
      // fusion passes that follow count users.
      llvm::SmallVector<KernelOp> ops;
      getOperation().walk([&](KernelOp k) { ops.push_back(k); });
      for (KernelOp k : llvm::reverse(ops))
        if (k->use_empty()) k->erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

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
// layout when the lhs batch dims lead. Returns the unbatched op, or null.
DotGeneralOp UnbroadcastDot(DotGeneralOp k) {
  auto broadcast = k.getInputs()[1].getDefiningOp<BroadcastInDimOp>();
  if (!broadcast) return nullptr;
  const llvm::ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions(),
                                lb = BatchingDims(k.getLhsBatchingDimensions()),
                                rb = BatchingDims(k.getRhsBatchingDimensions()),
                                rc = k.getRhsContractingDimensions();
  if (lb.empty() || !IsIdentity(lb)) return nullptr;
  const mlir::Value source = broadcast.getInputs()[0];
  const auto source_shape = TypeOf(source).getShape(), shape = TypeOf(k.getInputs()[1]).getShape();
  llvm::SmallVector<int64_t> contracting;
  int64_t last_free = -1;
  for (auto [j, d] : llvm::enumerate(dims)) {
    if (llvm::is_contained(rb, d) || source_shape[j] != shape[d]) return nullptr;
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
  mlir::OpBuilder b(k);
  return DotGeneralOp::create(b, k.getLoc(), k->getResultTypes(),
                              mlir::ValueRange{k.getInputs()[0], source},
                              k.getLhsContractingDimensions(), contracting,
                              b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr({}));
}

// How many leading dims of its input the reshape making `v` merges into
// its dim 0 ([b, h, s, d] -> [b * h, s, d]: 2), or 0 for any other value.
int64_t MergedLeadingDims(mlir::Value v) {
  auto r = v.getDefiningOp<ReshapeOp>();
  if (!r) return 0;
  const auto from = TypeOf(r.getInputs()[0]).getShape(), to = TypeOf(v).getShape();
  const int64_t n = static_cast<int64_t>(from.size()) - static_cast<int64_t>(to.size()) + 1;
  if (n < 2 || to.empty() || from.drop_front(n) != to.drop_front(1)) return 0;
  int64_t product = 1;
  for (int64_t d : from.take_front(n)) product *= d;
  return product == to[0] ? n : 0;
}

// dot_general over batch dim 0 of operands whose batch is n >= 2 merged
// leading dims [B1, ..., Bn] (attention heads: [b, h, s, d] -> [b * h, s, d])
// is the dot_general over those n batch dims, reshaped: a transpose that
// makes an operand can then fold into the dot. Both operands merge the same
// dims; or one merges those of a transpose and the other is split the same
// way (JAX's q @ k^T at batch 1 merges [1, h] on k^T's side only).
// Returns the replacement, or null.
mlir::Value UnmergeBatchDims(DotGeneralOp k) {
  if (BatchingDims(k.getLhsBatchingDimensions()) != llvm::ArrayRef<int64_t>{0} ||
      BatchingDims(k.getRhsBatchingDimensions()) != llvm::ArrayRef<int64_t>{0})
    return nullptr;
  const mlir::Value lhs = k.getInputs()[0], rhs = k.getInputs()[1];
  const int64_t n_lhs = MergedLeadingDims(lhs), n_rhs = MergedLeadingDims(rhs);
  auto source = [](mlir::Value merged) { return merged.getDefiningOp<ReshapeOp>().getInputs()[0]; };
  auto leading = [&](mlir::Value merged, int64_t n) {
    return TypeOf(source(merged)).getShape().take_front(n);
  };
  const int64_t n = n_lhs ? n_lhs : n_rhs;
  if (!n) return nullptr;
  const auto dims = leading(n_lhs ? lhs : rhs, n);
  const bool agree =
      n_lhs && n_rhs ? n_lhs == n_rhs && dims == leading(rhs, n_rhs)
                     : static_cast<bool>(source(n_lhs ? lhs : rhs).getDefiningOp<TransposeOp>());
  if (!agree) return nullptr;
  const llvm::SmallVector<int64_t> batch_shape(dims.begin(), dims.end());
  mlir::OpBuilder builder(k);
  // Each operand with its batch split: a merging reshape's input, or a new reshape.
  auto unmerged = [&](mlir::Value v, int64_t merged) -> mlir::Value {
    if (merged) return source(v);
    llvm::SmallVector<int64_t> shape(batch_shape);
    shape.append(TypeOf(v).getShape().begin() + 1, TypeOf(v).getShape().end());
    return Reshape(builder, k.getLoc(), v, shape);
  };
  const mlir::Value a = unmerged(lhs, n_lhs), b = unmerged(rhs, n_rhs);
  const auto a_shape = TypeOf(a).getShape();
  auto shifted = [&](llvm::ArrayRef<int64_t> dims) {
    llvm::SmallVector<int64_t> out;
    for (int64_t d : dims) out.push_back(d + n - 1);
    return out;
  };
  const mlir::DenseI64ArrayAttr batch_dims =
      builder.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(0, n)));
  const auto out = TypeOf(k.getResult(0));
  llvm::SmallVector<int64_t> shape(a_shape.take_front(n));
  shape.append(out.getShape().begin() + 1, out.getShape().end());
  auto dot = DotGeneralOp::create(
      builder, k.getLoc(),
      mlir::TypeRange{mlir::RankedTensorType::get(shape, out.getElementType())},
      mlir::ValueRange{a, b}, shifted(k.getLhsContractingDimensions()),
      shifted(k.getRhsContractingDimensions()), batch_dims, batch_dims);
  return Reshape(builder, k.getLoc(), dot.getResult(0), out.getShape());
}

// transpose(dot_general(a, b)) that swaps the blocks of lhs and rhs free
// dims is dot_general(b, a): JAX's backward writes a weight's gradient as
// x^T dy turned around. Not when b is a constant, whose matmul the runtime
// packs once. Returns the swapped op, or null.
DotGeneralOp SwappedDot(TransposeOp transpose) {
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
  mlir::OpBuilder b(transpose);
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
mlir::Value ScaleBeforeTranspose(MulOp k) {
  for (int side = 0; side < 2; ++side) {
    auto t = k.getInputs()[side].getDefiningOp<TransposeOp>();
    const mlir::Value scale = k.getInputs()[1 - side];
    if (!t || !t->hasOneUse() || !ScalarConstant(scale)) continue;
    const mlir::Value x = t.getInputs()[0];
    mlir::OpBuilder b(k);
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

// What `k` can be replaced by, or null. May instead rewrite `k` in place
// (reading through a chain) and set `changed`.
mlir::Value Simplified(BrtOp k, bool& changed) {
  if (k->getNumResults() != 1 || k.getInputs().empty()) return nullptr;
  const mlir::Value in = k.getInputs()[0], out = k->getResult(0);
  if (mlir::isa<ReshapeOp, ConvertOp>(k)) {
    if (in.getType() == out.getType()) return in;
    if (auto inner = in.getDefiningOp<ReshapeOp>(); inner && mlir::isa<ReshapeOp>(k)) {
      k->setOperand(0, inner.getInputs()[0]);
      changed = true;
    }
    return nullptr;
  }
  // A select on a constant predicate (a lax.cond whose predicate folded,
  // as one on an unrolled loop's counter does) is the operand it picks.
  if (mlir::isa<SelectOp>(k)) {
    auto c = StripBroadcasts(in).getDefiningOp<ConstantOp>();
    auto pred = c ? mlir::dyn_cast<mlir::DenseIntElementsAttr>(c.getValue()) : nullptr;
    if (!pred || !pred.isSplat() || !pred.getElementType().isInteger(1)) return nullptr;
    mlir::Value picked = k.getInputs()[pred.getSplatValue<bool>() ? 1 : 2];
    return picked.getType() == out.getType() ? picked : nullptr;
  }
  if (auto broadcast = mlir::dyn_cast<BroadcastInDimOp>(k.getOperation())) {
    const llvm::ArrayRef<int64_t> dims = broadcast.getBroadcastDimensions();
    if (in.getType() == out.getType() && IsIdentity(dims)) return in;
    // A reshape that only adds or drops unit dims before it (torch's
    // keepdim reductions: [n, 12, 128] -> [n, 12, 128, 1]): broadcast what it
    // reshapes.
    auto reshape = in.getDefiningOp<ReshapeOp>();
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
    broadcast.setBroadcastDimensionsAttr(mlir::DenseI64ArrayAttr::get(k->getContext(), mapped));
    broadcast->setOperand(0, reshape.getInputs()[0]);
    changed = true;
    return nullptr;
  }
  if (auto transpose = mlir::dyn_cast<TransposeOp>(k.getOperation())) {
    const llvm::ArrayRef<int64_t> perm = transpose.getPermutation();
    if (IsIdentity(perm)) return in;
    if (DotGeneralOp dot = SwappedDot(transpose)) return dot.getResult(0);
    auto inner = in.getDefiningOp<TransposeOp>();
    if (!inner) return nullptr;
    // Result dim i is the inner result's dim perm[i], which is x's dim
    // inner_perm[perm[i]].
    const llvm::ArrayRef<int64_t> inner_perm = inner.getPermutation();
    llvm::SmallVector<int64_t> composed;
    for (int64_t d : perm) composed.push_back(inner_perm[d]);
    transpose.setPermutationAttr(mlir::DenseI64ArrayAttr::get(k->getContext(), composed));
    transpose->setOperand(0, inner.getInputs()[0]);
    changed = true;
    return IsIdentity(composed) ? inner.getInputs()[0] : nullptr;
  }
  if (auto clamp = mlir::dyn_cast<ClampOp>(k.getOperation());
      clamp && mlir::isa<mlir::FloatType>(TypeOf(out).getElementType())) {
    if (mlir::Value x = ErfArgument(clamp)) {
      mlir::OpBuilder b(clamp);
      return ErfOp::create(b, clamp.getLoc(), mlir::TypeRange{out.getType()}, mlir::ValueRange{x})
          .getResult(0);
    }
    return nullptr;
  }
  if (auto dot = mlir::dyn_cast<DotGeneralOp>(k.getOperation())) {
    if (DotGeneralOp unbatched = UnbroadcastDot(dot)) return unbatched.getResult(0);
    return UnmergeBatchDims(dot);
  }
  if (auto multiply = mlir::dyn_cast<MulOp>(k.getOperation()))
    if (mlir::Value moved = ScaleBeforeTranspose(multiply)) return moved;
  // x * 1 and x / 1 are x, NaN and infinities included.
  if (mlir::isa<MulOp, DivOp>(k)) {
    for (int side = mlir::isa<MulOp>(k) ? 0 : 1; side < 2; ++side) {
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
      getOperation().walk([&](BrtOp k) {
        if (mlir::Value replacement = Simplified(k, changed)) {
          k->getResult(0).replaceAllUsesWith(replacement);
          changed = true;
        }
      });
      // What no longer has users goes; canonicalize would too, but the
      // fusion passes that follow count users.
      llvm::SmallVector<BrtOp> ops;
      getOperation().walk([&](BrtOp k) { ops.push_back(k); });
      for (BrtOp k : llvm::reverse(ops))
        if (k->use_empty()) k->erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

// brt-verify: shape and dtype rules of the common op kinds, reported at the
// source location. (The runtime's kernels check everything again at load.)
#include <functional>

#include "BrtDialect.h"
#include "OpKinds.h"
#include "RuntimeTypes.h"
#include "import/OpText.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "passes/Passes.h"

namespace brt::bridge {

#define GEN_PASS_DEF_VERIFY
#include "passes/Passes.h.inc"
namespace {

mlir::RankedTensorType TypeOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

std::string Shape(mlir::Value v) { return PrintedText(v.getType()); }

// NumPy broadcasting of `from` to `to`.
bool Broadcasts(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

// dot_general's and brt.matmul's dimension lists against their operands and
// result. Dot: DotGeneralOp or MatmulOp.
template <typename Dot>
bool CheckDot(Dot k, const std::function<bool(const std::string&)>& fail) {
  const auto inputs = k.getInputs();
  const auto l = TypeOf(inputs[0]).getShape(), r = TypeOf(inputs[1]).getShape();
  const llvm::ArrayRef<int64_t> lb =
      k.getLhsBatchingDimensions().value_or(llvm::ArrayRef<int64_t>());
  const llvm::ArrayRef<int64_t> rb =
      k.getRhsBatchingDimensions().value_or(llvm::ArrayRef<int64_t>());
  const llvm::ArrayRef<int64_t> lc = k.getLhsContractingDimensions(),
                                rc = k.getRhsContractingDimensions();
  if (lb.size() != rb.size() || lc.size() != rc.size())
    return fail("dimension lists differ in length");
  llvm::SmallVector<int64_t> out;
  for (auto [a, b] : llvm::zip(lb, rb)) {
    if (a < 0 || b < 0 || a >= static_cast<int64_t>(l.size()) ||
        b >= static_cast<int64_t>(r.size()) || l[a] != r[b])
      return fail("batching dimensions do not match");
    out.push_back(l[a]);
  }
  for (auto [a, b] : llvm::zip(lc, rc))
    if (a < 0 || b < 0 || a >= static_cast<int64_t>(l.size()) ||
        b >= static_cast<int64_t>(r.size()) || l[a] != r[b])
      return fail("contracting dimensions of " + Shape(inputs[0]) + " and " + Shape(inputs[1]) +
                  " do not match");
  for (int64_t d = 0; d < static_cast<int64_t>(l.size()); ++d)
    if (!llvm::is_contained(lb, d) && !llvm::is_contained(lc, d)) out.push_back(l[d]);
  for (int64_t d = 0; d < static_cast<int64_t>(r.size()); ++d)
    if (!llvm::is_contained(rb, d) && !llvm::is_contained(rc, d)) out.push_back(r[d]);
  if (llvm::ArrayRef<int64_t>(out) != TypeOf(k.getResult(0)).getShape())
    return fail("result " + Shape(k.getResult(0)) + " does not match the operands");
  return true;
}

// broadcast_in_dim's dims (operand dim i goes to result dim dims[i]) or
// transpose's permutation (result dim i is operand dim dims[i]).
bool CheckDimMap(mlir::Operation* k, llvm::ArrayRef<int64_t> dims, bool transpose,
                 const std::function<bool(const std::string&)>& fail) {
  const auto in = TypeOf(k->getOperand(0)).getShape(), out = TypeOf(k->getResult(0)).getShape();
  if (dims.size() != in.size()) return fail("dimension list does not match the operand rank");
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d < 0 || d >= static_cast<int64_t>(out.size()))
      return fail("dimension " + std::to_string(d) + " is out of range");
    const int64_t from = transpose ? in[d] : in[i], to = transpose ? out[i] : out[d];
    if (from != to && !(!transpose && from == 1))
      return fail(Shape(k->getOperand(0)) + " does not map onto " + Shape(k->getResult(0)));
  }
  return true;
}

bool CheckOp(BrtOp k) {
  mlir::Operation* op = k.getOperation();
  const llvm::StringRef kind = k.getKind();
  const std::function<bool(const std::string&)> fail = [&](const std::string& message) {
    k->emitError() << "'" << kind << "': " << message;
    return false;
  };
  auto inputs = k.getInputs();
  for (mlir::Value v : llvm::concat<mlir::Value>(inputs, k->getResults()))
    if (ToDType(TypeOf(v).getElementType()) == DType::kInvalid)
      return fail(Shape(v) + " has an element type the runtime does not have");
  if (const KindInfo* info = FindKind(kind);
      IsElementwise(info) && info->cls != KindClass::kConvert) {
    if (k->getNumResults() != 1) return fail("expects one result");
    mlir::Value out = k->getResult(0);
    const bool compare = mlir::isa<CompareOp>(op);
    for (auto [i, v] : llvm::enumerate(inputs)) {
      if (!Broadcasts(TypeOf(v).getShape(), TypeOf(out).getShape()))
        return fail("operand " + std::to_string(i) + " " + Shape(v) +
                    " does not broadcast to the result " + Shape(out));
      const bool predicate = mlir::isa<SelectOp>(op) && i == 0;
      mlir::Type want = compare ? TypeOf(inputs[0]).getElementType() : TypeOf(out).getElementType();
      // abs of a complex number is its magnitude, of the parts' type.
      if (auto complex = mlir::dyn_cast<mlir::ComplexType>(TypeOf(v).getElementType());
          complex && kind == "abs" && complex.getElementType() == want)
        want = complex;
      if (predicate ? !TypeOf(v).getElementType().isInteger(1) : TypeOf(v).getElementType() != want)
        return fail("operand " + std::to_string(i) + " " + Shape(v) +
                    " has the wrong element type for result " + Shape(out));
    }
    if (compare && !TypeOf(out).getElementType().isInteger(1)) return fail("result must be i1");
    return true;
  }
  if (mlir::isa<ReshapeOp, ConvertOp>(op)) {
    if (inputs.size() != 1) return fail("expects one operand");
    mlir::Value out = k->getResult(0);
    const bool same = mlir::isa<ReshapeOp>(op)
                          ? TypeOf(inputs[0]).getNumElements() == TypeOf(out).getNumElements()
                          : TypeOf(inputs[0]).getShape() == TypeOf(out).getShape();
    if (!same) return fail(Shape(inputs[0]) + " and " + Shape(out) + " do not match");
    return true;
  }
  if (auto b = mlir::dyn_cast<BroadcastInDimOp>(op))
    return CheckDimMap(op, b.getBroadcastDimensions(), /*transpose=*/false, fail);
  if (auto t = mlir::dyn_cast<TransposeOp>(op))
    return CheckDimMap(op, t.getPermutation(), /*transpose=*/true, fail);
  if (auto dot = mlir::dyn_cast<DotGeneralOp>(op)) return CheckDot(dot, fail);
  if (auto matmul = mlir::dyn_cast<MatmulOp>(op)) return CheckDot(matmul, fail);
  if (auto reduce = mlir::dyn_cast<ReduceOp>(op)) {
    const auto in = TypeOf(inputs[0]).getShape();
    llvm::SmallVector<int64_t> kept;
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
      if (!llvm::is_contained(reduce.getDimensions(), d)) kept.push_back(in[d]);
    if (llvm::ArrayRef<int64_t>(kept) != TypeOf(k->getResult(0)).getShape())
      return fail("result " + Shape(k->getResult(0)) + " is not " + Shape(inputs[0]) +
                  " reduced over the dimensions");
    return true;
  }
  return true;  // other kinds: checked by the runtime's kernels at load
}

struct VerifyPass : impl::VerifyBase<VerifyPass> {
  using VerifyBase::VerifyBase;
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](BrtOp k) { ok = CheckOp(k) && ok; });
    if (!ok) signalPassFailure();
  }
};

}  // namespace

}  // namespace brt::bridge

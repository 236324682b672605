// brt-verify: shape and dtype rules of the common op kinds, reported at the
// source location. (The runtime's kernels check everything again at load.)
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

bool CheckKernel(KernelOp k) {
  const llvm::StringRef kind = k.getKind();
  auto fail = [&](const std::string& message) {
    k.emitError() << "'" << kind << "': " << message;
    return false;
  };
  auto inputs = k.getInputs();
  for (mlir::Value v : llvm::concat<mlir::Value>(inputs, k.getResults()))
    if (ToDType(TypeOf(v).getElementType()) == DType::kInvalid)
      return fail(Shape(v) + " has an element type the runtime does not have");
  if (const KindInfo* info = FindKind(kind);
      IsElementwise(info) && info->cls != KindClass::kConvert) {
    if (k->getNumResults() != 1) return fail("expects one result");
    mlir::Value out = k.getResult(0);
    for (auto [i, v] : llvm::enumerate(inputs)) {
      if (!Broadcasts(TypeOf(v).getShape(), TypeOf(out).getShape()))
        return fail("operand " + std::to_string(i) + " " + Shape(v) +
                    " does not broadcast to the result " + Shape(out));
      const bool predicate = kind == "select" && i == 0;
      const mlir::Type want =
          kind == "compare" ? TypeOf(inputs[0]).getElementType() : TypeOf(out).getElementType();
      if (predicate ? !TypeOf(v).getElementType().isInteger(1) : TypeOf(v).getElementType() != want)
        return fail("operand " + std::to_string(i) + " " + Shape(v) +
                    " has the wrong element type for result " + Shape(out));
    }
    if (kind == "compare" && !TypeOf(out).getElementType().isInteger(1))
      return fail("result must be i1");
    return true;
  }
  if (kind == "reshape" || kind == "convert") {
    if (inputs.size() != 1) return fail("expects one operand");
    const bool same =
        kind == "reshape"
            ? TypeOf(inputs[0]).getNumElements() == TypeOf(k.getResult(0)).getNumElements()
            : TypeOf(inputs[0]).getShape() == TypeOf(k.getResult(0)).getShape();
    if (!same) return fail(Shape(inputs[0]) + " and " + Shape(k.getResult(0)) + " do not match");
    return true;
  }
  if (kind == "broadcast_in_dim" || kind == "transpose") {
    auto dims = k.getParams().getAs<mlir::DenseI64ArrayAttr>(
        kind == "transpose" ? "permutation" : "broadcast_dimensions");
    const auto in = TypeOf(inputs[0]).getShape(), out = TypeOf(k.getResult(0)).getShape();
    if (!dims || dims.size() != in.size())
      return fail("dimension list does not match the operand rank");
    for (auto [i, d] : llvm::enumerate(dims.asArrayRef())) {
      if (d < 0 || d >= static_cast<int64_t>(out.size()))
        return fail("dimension " + std::to_string(d) + " is out of range");
      const int64_t from = kind == "transpose" ? in[d] : in[i],
                    to = kind == "transpose" ? out[i] : out[d];
      if (from != to && !(kind == "broadcast_in_dim" && from == 1))
        return fail(Shape(inputs[0]) + " does not map onto " + Shape(k.getResult(0)));
    }
    return true;
  }
  if (kind == "dot_general" || kind == "brt.matmul") {
    auto get = [&](const char* name) {
      auto a = k.getParams().getAs<mlir::DenseI64ArrayAttr>(name);
      return a ? llvm::SmallVector<int64_t>(a.asArrayRef()) : llvm::SmallVector<int64_t>();
    };
    const auto l = TypeOf(inputs[0]).getShape(), r = TypeOf(inputs[1]).getShape();
    auto lb = get("lhs_batching_dimensions"), rb = get("rhs_batching_dimensions");
    auto lc = get("lhs_contracting_dimensions"), rc = get("rhs_contracting_dimensions");
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
  if (kind == "reduce") {
    auto dims = k.getParams().getAs<mlir::DenseI64ArrayAttr>("dimensions");
    const auto in = TypeOf(inputs[0]).getShape();
    if (!dims) return fail("missing dimensions");
    llvm::SmallVector<int64_t> kept;
    for (int64_t d = 0; d < static_cast<int64_t>(in.size()); ++d)
      if (!llvm::is_contained(dims.asArrayRef(), d)) kept.push_back(in[d]);
    if (llvm::ArrayRef<int64_t>(kept) != TypeOf(k.getResult(0)).getShape())
      return fail("result " + Shape(k.getResult(0)) + " is not " + Shape(inputs[0]) +
                  " reduced over the dimensions");
    return true;
  }
  return true;  // other kinds: checked by the runtime's kernels at load
}

struct VerifyPass : impl::VerifyBase<VerifyPass> {
  using VerifyBase::VerifyBase;
  void runOnOperation() override {
    bool ok = true;
    getOperation().walk([&](KernelOp k) { ok = CheckKernel(k) && ok; });
    if (!ok) signalPassFailure();
  }
};

}  // namespace

}  // namespace brt::bridge

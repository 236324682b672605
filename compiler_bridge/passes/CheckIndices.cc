// brt-check-indices: a brt.check_indices before the indices of every gather
// and scatter, so that a run with an index out of range fails, naming the op
// and its source location. StableHLO defines such an index (a gather clamps
// it, a scatter drops the update), PyTorch refuses it: brt.compile_torch asks
// for this pass (brt-compile --check-indices) after rewriting PyTorch's
// negative indices. Index vectors must lie along the indices' last dim (or
// have one component), as torch-mlir writes them; others are left unchecked.
#include <string>

#include "BrtDialect.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_CHECKINDICES
#include "passes/Passes.h.inc"

namespace {

// Per index component, the number of valid start indices: the operand's
// extent along the dim it addresses less the window's, plus one.
std::optional<llvm::SmallVector<int64_t>> Bounds(KernelOp k) {
  const bool gather = k.getKind() == "gather";
  llvm::ArrayRef<int64_t> operand = TypeOf(k.getInputs()[0]).getShape();
  llvm::SmallVector<int64_t> window(operand.size(), 1);
  if (gather) {
    llvm::ArrayRef<int64_t> sizes = IntsParam(k, "slice_sizes");
    if (sizes.size() != operand.size()) return std::nullopt;
    window.assign(sizes.begin(), sizes.end());
  } else {
    llvm::ArrayRef<int64_t> inserted = IntsParam(k, "inserted_window_dims");
    llvm::ArrayRef<int64_t> window_dims = IntsParam(k, "update_window_dims");
    llvm::ArrayRef<int64_t> updates = TypeOf(k.getInputs()[2]).getShape();
    size_t next = 0;
    for (size_t d = 0; d < operand.size(); ++d) {
      if (llvm::is_contained(inserted, static_cast<int64_t>(d))) continue;
      if (next >= window_dims.size() || window_dims[next] >= static_cast<int64_t>(updates.size()))
        return std::nullopt;
      window[d] = updates[window_dims[next++]];
    }
  }
  llvm::SmallVector<int64_t> bounds;
  for (int64_t d : IntsParam(k, gather ? "start_index_map" : "scatter_dims_to_operand_dims")) {
    if (d < 0 || d >= static_cast<int64_t>(operand.size())) return std::nullopt;
    bounds.push_back(operand[d] - window[d] + 1);
  }
  return bounds;
}

// "gather at model.py:12": the first file location the op carries (torch-mlir
// keeps the Python line that made it), else its location as MLIR prints it.
std::string Describe(KernelOp k) {
  std::string where;
  k.getLoc()->walk([&](mlir::Location l) {
    auto file = mlir::dyn_cast<mlir::FileLineColLoc>(l);
    if (!file) return mlir::WalkResult::advance();
    where = file.getFilename().str() + ":" + std::to_string(file.getLine());
    return mlir::WalkResult::interrupt();
  });
  if (where.empty()) {
    llvm::raw_string_ostream os(where);
    k.getLoc().print(os);
  }
  return k.getKind().str() + " at " + where;
}

struct CheckIndicesPass : impl::CheckIndicesBase<CheckIndicesPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() != "gather" && k.getKind() != "scatter") return;
      mlir::Value indices = k.getInputs()[1];
      mlir::RankedTensorType type = TypeOf(indices);
      auto vector_dim = k.getParams().getAs<mlir::IntegerAttr>("index_vector_dim");
      std::optional<llvm::SmallVector<int64_t>> bounds = Bounds(k);
      if (!bounds || bounds->empty() || !vector_dim ||
          !(type.getElementType().isSignlessInteger(32) ||
            type.getElementType().isSignlessInteger(64)))
        return;
      const int64_t ivd = vector_dim.getInt();
      const bool along_last = type.getRank() > 0 && ivd == type.getRank() - 1;
      if (bounds->size() != 1 && !along_last) return;
      if (ivd == type.getRank() - 1 &&
          type.getShape().back() != static_cast<int64_t>(bounds->size()))
        return;
      mlir::OpBuilder b(k);
      auto check = KernelOp::create(
          b, k.getLoc(), mlir::TypeRange{type}, b.getStringAttr("brt.check_indices"),
          mlir::ValueRange{indices},
          b.getDictionaryAttr({b.getNamedAttr("bounds", b.getDenseI64ArrayAttr(*bounds)),
                               b.getNamedAttr("what", b.getStringAttr(Describe(k)))}));
      k->setOperand(1, check.getResult(0));
    });
  }
};

}  // namespace
}  // namespace brt::bridge

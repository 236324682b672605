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
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_CHECKINDICES
#include "passes/Passes.h.inc"

namespace {

// Per index component, the number of valid start indices: the operand's
// extent along the dim it addresses less the window's, plus one.
std::optional<llvm::SmallVector<int64_t>> Bounds(mlir::Operation* k) {
  auto gather = mlir::dyn_cast<GatherOp>(k);
  llvm::ArrayRef<int64_t> operand = TypeOf(k->getOperand(0)).getShape();
  llvm::SmallVector<int64_t> window(operand.size(), 1);
  if (gather) {
    llvm::ArrayRef<int64_t> sizes = gather.getSliceSizes();
    if (sizes.size() != operand.size()) return std::nullopt;
    window.assign(sizes.begin(), sizes.end());
  } else {
    auto scatter = mlir::cast<ScatterOp>(k);
    llvm::ArrayRef<int64_t> inserted = scatter.getInsertedWindowDims();
    llvm::ArrayRef<int64_t> window_dims = scatter.getUpdateWindowDims();
    llvm::ArrayRef<int64_t> updates = TypeOf(scatter.getInputs()[2]).getShape();
    size_t next = 0;
    for (size_t d = 0; d < operand.size(); ++d) {
      if (llvm::is_contained(inserted, static_cast<int64_t>(d))) continue;
      if (next >= window_dims.size() || window_dims[next] >= static_cast<int64_t>(updates.size()))
        return std::nullopt;
      window[d] = updates[window_dims[next++]];
    }
  }
  llvm::SmallVector<int64_t> bounds;
  for (int64_t d : gather ? gather.getStartIndexMap()
                          : mlir::cast<ScatterOp>(k).getScatterDimsToOperandDims()) {
    if (d < 0 || d >= static_cast<int64_t>(operand.size())) return std::nullopt;
    // A symbolic extent or window (kDynamic, or a slice size of -1) has no
    // bound known here: that op goes unchecked.
    if (mlir::ShapedType::isDynamic(operand[d]) || window[d] < 0) return std::nullopt;
    bounds.push_back(operand[d] - window[d] + 1);
  }
  return bounds;
}

// "gather at model.py:12": the first file location the op carries (torch-mlir
// keeps the Python line that made it), else its location as MLIR prints it.
std::string Describe(BrtOp k) {
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

// A brt.check_indices of k's indices (operand 1) before k, which then reads
// them through it, if its index vectors are ones this pass checks.
mlir::LogicalResult CheckIndicesOf(BrtOp k, std::optional<uint64_t> vector_dim,
                                   mlir::PatternRewriter& rewriter) {
  mlir::Value indices = k.getInputs()[1];
  mlir::RankedTensorType type = TypeOf(indices);
  std::optional<llvm::SmallVector<int64_t>> bounds = Bounds(k);
  auto element = mlir::dyn_cast<mlir::IntegerType>(type.getElementType());
  if (!bounds || bounds->empty() || !vector_dim || !element || element.getWidth() == 1)
    return mlir::failure();
  const auto ivd = static_cast<int64_t>(*vector_dim);
  const bool along_last = type.getRank() > 0 && ivd == type.getRank() - 1;
  if (bounds->size() != 1 && !along_last) return mlir::failure();
  if (ivd == type.getRank() - 1 && type.getShape().back() != static_cast<int64_t>(bounds->size()))
    return mlir::failure();
  rewriter.setInsertionPoint(k);
  auto check = CheckIndicesOp::create(rewriter, k.getLoc(), mlir::TypeRange{type},
                                      mlir::ValueRange{indices}, *bounds, Describe(k));
  rewriter.modifyOpInPlace(k, [&] { k->setOperand(1, check.getResult(0)); });
  return mlir::success();
}

struct CheckGather : mlir::OpRewritePattern<GatherOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(GatherOp gather,
                                      mlir::PatternRewriter& rewriter) const override {
    return CheckIndicesOf(gather, gather.getIndexVectorDim(), rewriter);
  }
};

struct CheckScatter : mlir::OpRewritePattern<ScatterOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(ScatterOp scatter,
                                      mlir::PatternRewriter& rewriter) const override {
    return CheckIndicesOf(scatter, scatter.getIndexVectorDim(), rewriter);
  }
};

// Each op is visited once and its check made before it, so the walk neither
// sees the check nor checks an op twice.
struct CheckIndicesPass : impl::CheckIndicesBase<CheckIndicesPass> {
  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<CheckGather, CheckScatter>(ctx);
    patterns_ = std::move(set);
    return mlir::success();
  }

  void runOnOperation() override { mlir::walkAndApplyPatterns(getOperation(), patterns_); }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

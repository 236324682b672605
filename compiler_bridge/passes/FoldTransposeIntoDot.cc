// brt-fold-transpose-into-dot: dot_general reads a transposed operand
// directly, with its dimension numbers remapped.
#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FOLDTRANSPOSEINTODOT
#include "passes/Passes.h.inc"

namespace {

// dot_general(transpose(x), y) reads x directly when the permutation keeps
// the operand's free dimensions in order (so the result layout is the same),
// and likewise for a transposed y: the dot changes in place.
struct FoldTransposeOperands : mlir::OpRewritePattern<DotGeneralOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(DotGeneralOp dot,
                                      mlir::PatternRewriter& rewriter) const override {
    bool folded = false;
    for (int side = 0; side < 2; ++side) {
      auto t = dot.getInputs()[side].getDefiningOp<TransposeOp>();
      if (!t) continue;
      const llvm::ArrayRef<int64_t> perm = t.getPermutation();
      const bool lhs = side == 0;
      const mlir::DenseI64ArrayAttr batch =
          lhs ? dot.getLhsBatchingDimensionsAttr() : dot.getRhsBatchingDimensionsAttr();
      const llvm::ArrayRef<int64_t> contract =
          lhs ? dot.getLhsContractingDimensions() : dot.getRhsContractingDimensions();
      llvm::SmallVector<int64_t> b_dims(batch ? batch.asArrayRef() : llvm::ArrayRef<int64_t>{}),
          c_dims(contract), free_mapped;
      const int64_t rank = static_cast<int64_t>(perm.size());
      for (int64_t d = 0; d < rank; ++d)
        if (!llvm::is_contained(b_dims, d) && !llvm::is_contained(c_dims, d))
          free_mapped.push_back(perm[d]);
      if (!llvm::is_sorted(free_mapped)) continue;
      for (int64_t& d : b_dims) d = perm[d];
      for (int64_t& d : c_dims) d = perm[d];
      const mlir::DenseI64ArrayAttr new_batch = rewriter.getDenseI64ArrayAttr(b_dims),
                                    new_contract = rewriter.getDenseI64ArrayAttr(c_dims);
      rewriter.modifyOpInPlace(dot, [&] {
        if (lhs) {
          if (batch) dot.setLhsBatchingDimensionsAttr(new_batch);
          dot.setLhsContractingDimensionsAttr(new_contract);
        } else {
          if (batch) dot.setRhsBatchingDimensionsAttr(new_batch);
          dot.setRhsContractingDimensionsAttr(new_contract);
        }
        dot->setOperand(side, t.getInputs()[0]);
      });
      folded = true;
    }
    return mlir::success(folded);
  }
};

struct FoldTransposeIntoDotPass : impl::FoldTransposeIntoDotBase<FoldTransposeIntoDotPass> {
  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<FoldTransposeOperands>(ctx);
    patterns_ = std::move(set);
    return mlir::success();
  }

  void runOnOperation() override { mlir::walkAndApplyPatterns(getOperation(), patterns_); }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

// brt-fuse-collective-matmul: all_gather feeding a dot_general's lhs
// (AG+GEMM, a column-parallel layer's input) becomes brt.all_gather_matmul,
// and a dot_general feeding an add reduce_scatter (GEMM+RS, a row-parallel
// layer's output) becomes brt.matmul_reduce_scatter: the collectives
// provider then overlaps the transfers with the GEMM. Fused when the
// collective works along dimension 0, the lhs contracts its last dimension
// with one dimension of a 2-D rhs, everything is f32, and the rank's own
// block has at least `min-rows-per-rank` rows: below that, decomposing the
// GEMM costs more than the transfer it hides, and the serial path stays.
#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "passes/Passes.h"
#include "passes/Patterns.h"

namespace brt::bridge {

#define GEN_PASS_DEF_FUSECOLLECTIVEMATMUL
#include "passes/Passes.h.inc"

namespace {

// A dot_general the overlapped kernels take: lhs [rows..., K] x rhs [K, N]
// or [N, K], f32, no batch dimensions.
bool FusableDot(DotGeneralOp dot) {
  const llvm::ArrayRef<int64_t> lc = dot.getLhsContractingDimensions(),
                                rc = dot.getRhsContractingDimensions();
  auto lb = dot.getLhsBatchingDimensionsAttr();
  auto lhs = TypeOf(dot.getInputs()[0]), rhs = TypeOf(dot.getInputs()[1]);
  return (!lb || lb.empty()) && lc.size() == 1 && lc[0] == lhs.getRank() - 1 &&
         lhs.getRank() >= 2 && rhs.getRank() == 2 && rc.size() == 1 &&
         lhs.getElementType().isF32() && rhs.getElementType().isF32() &&
         TypeOf(dot.getResult(0)).getElementType().isF32();
}

// Rows of a [rows..., last] tensor: the product of all but its last dimension.
int64_t Rows(mlir::Value v) {
  int64_t rows = 1;
  for (int64_t d : TypeOf(v).getShape().drop_back()) rows *= d;
  return rows;
}

// A dot_general whose lhs is an all_gather along dim 0, its only user,
// becomes brt.all_gather_matmul; the all_gather goes.
struct GatherIntoDot : mlir::OpRewritePattern<DotGeneralOp> {
  GatherIntoDot(mlir::MLIRContext* ctx, int64_t min_rows)
      : OpRewritePattern(ctx), min_rows_(min_rows) {}

  mlir::LogicalResult matchAndRewrite(DotGeneralOp dot,
                                      mlir::PatternRewriter& rewriter) const override {
    auto gather = dot.getInputs()[0].getDefiningOp<AllGatherOp>();
    if (!FusableDot(dot) || !gather || !gather->hasOneUse() || gather.getAllGatherDim() != 0 ||
        Rows(gather.getInputs()[0]) < min_rows_)
      return mlir::failure();
    // The fused op takes the dot's contraction and the collective's groups.
    auto fused = AllGatherMatmulOp::create(
        rewriter, dot.getLoc(), dot->getResultTypes(),
        mlir::ValueRange{gather.getInputs()[0], dot.getInputs()[1]}, rewriter.getI64IntegerAttr(0),
        dot.getLhsContractingDimensionsAttr(), dot.getRhsContractingDimensionsAttr(),
        gather.getReplicaGroupsAttr(), gather.getGroupSizeAttr());
    rewriter.replaceOp(dot, fused);
    rewriter.eraseOp(gather);
    return mlir::success();
  }

  int64_t min_rows_;
};

// An add reduce_scatter along dim 0 of a dot_general, its only user, becomes
// brt.matmul_reduce_scatter; the dot goes. A dot that GatherIntoDot fused is
// no dot_general by then. Rooted at the reduce_scatter, which follows the
// dot: a walk may erase the op it visits and those before it, not those
// after.
struct DotIntoScatter : mlir::OpRewritePattern<ReduceScatterOp> {
  DotIntoScatter(mlir::MLIRContext* ctx, int64_t min_rows)
      : OpRewritePattern(ctx), min_rows_(min_rows) {}

  mlir::LogicalResult matchAndRewrite(ReduceScatterOp scatter,
                                      mlir::PatternRewriter& rewriter) const override {
    auto dot = scatter.getInputs()[0].getDefiningOp<DotGeneralOp>();
    if (!dot || !FusableDot(dot) || !dot->hasOneUse() || scatter.getReducer() != "add" ||
        scatter.getScatterDimension() != 0 || Rows(scatter->getResult(0)) < min_rows_)
      return mlir::failure();
    // The fused op takes the dot's contraction and the collective's groups.
    auto fused = MatmulReduceScatterOp::create(
        rewriter, scatter.getLoc(), scatter->getResultTypes(), dot.getInputs(),
        rewriter.getI64IntegerAttr(0), dot.getLhsContractingDimensionsAttr(),
        dot.getRhsContractingDimensionsAttr(), scatter.getReplicaGroupsAttr(),
        scatter.getGroupSizeAttr());
    rewriter.replaceOp(scatter, fused);
    rewriter.eraseOp(dot);
    return mlir::success();
  }

  int64_t min_rows_;
};

struct FuseCollectiveMatmulPass : impl::FuseCollectiveMatmulBase<FuseCollectiveMatmulPass> {
  using FuseCollectiveMatmulBase::FuseCollectiveMatmulBase;

  mlir::LogicalResult initialize(mlir::MLIRContext* ctx) override {
    mlir::RewritePatternSet set(ctx);
    set.add<GatherIntoDot, DotIntoScatter>(ctx, minRowsPerRank.getValue());
    patterns_ = std::move(set);
    return mlir::success();
  }

  void runOnOperation() override { mlir::walkAndApplyPatterns(getOperation(), patterns_); }

  mlir::FrozenRewritePatternSet patterns_;
};

}  // namespace
}  // namespace brt::bridge

// brt-fuse-collective-matmul: all_gather feeding a dot_general's lhs
// (AG+GEMM, a column-parallel layer's input) becomes brt.all_gather_matmul,
// and a dot_general feeding an add reduce_scatter (GEMM+RS, a row-parallel
// layer's output) becomes brt.matmul_reduce_scatter: the collectives
// provider then overlaps the transfers with the GEMM. Fused when the
// collective works along dimension 0, the lhs contracts its last dimension
// with one dimension of a 2-D rhs, and everything is f32.
#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
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

struct FuseCollectiveMatmulPass : impl::FuseCollectiveMatmulBase<FuseCollectiveMatmulPass> {
  void runOnOperation() override {
    llvm::SmallVector<DotGeneralOp> dots;
    getOperation().walk([&](DotGeneralOp dot) { dots.push_back(dot); });
    for (DotGeneralOp dot : dots) {
      if (!FusableDot(dot)) continue;
      // The fused op takes the dot's contraction and the collective's groups.
      mlir::OpBuilder b(dot);
      auto gather = dot.getInputs()[0].getDefiningOp<AllGatherOp>();
      if (gather && gather->hasOneUse() && gather.getAllGatherDim() == 0) {
        auto fused = AllGatherMatmulOp::create(
            b, dot.getLoc(), dot->getResultTypes(),
            mlir::ValueRange{gather.getInputs()[0], dot.getInputs()[1]}, b.getI64IntegerAttr(0),
            dot.getLhsContractingDimensionsAttr(), dot.getRhsContractingDimensionsAttr(),
            gather.getReplicaGroupsAttr(), gather.getGroupSizeAttr());
        dot.getResult(0).replaceAllUsesWith(fused.getResult(0));
        dot.erase();
        gather.erase();
        continue;
      }
      if (!dot->hasOneUse()) continue;
      auto scatter = mlir::dyn_cast<ReduceScatterOp>(*dot->getUsers().begin());
      if (!scatter || scatter.getReducer() != "add" || scatter.getScatterDimension() != 0) continue;
      b.setInsertionPoint(scatter);
      auto fused = MatmulReduceScatterOp::create(
          b, scatter.getLoc(), scatter->getResultTypes(), dot.getInputs(), b.getI64IntegerAttr(0),
          dot.getLhsContractingDimensionsAttr(), dot.getRhsContractingDimensionsAttr(),
          scatter.getReplicaGroupsAttr(), scatter.getGroupSizeAttr());
      scatter.getResult(0).replaceAllUsesWith(fused.getResult(0));
      scatter.erase();
      dot.erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

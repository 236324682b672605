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

int64_t IntParam(KernelOp k, llvm::StringRef name, int64_t fallback) {
  auto a = k.getParams().getAs<mlir::IntegerAttr>(name);
  return a ? a.getInt() : fallback;
}

// A dot_general the overlapped kernels take: lhs [rows..., K] x rhs [K, N]
// or [N, K], f32, no batch dimensions.
bool FusableDot(KernelOp dot) {
  if (!dot || dot.getKind() != "dot_general") return false;
  auto params = dot.getParams();
  auto lc = params.getAs<mlir::DenseI64ArrayAttr>("lhs_contracting_dimensions");
  auto rc = params.getAs<mlir::DenseI64ArrayAttr>("rhs_contracting_dimensions");
  auto lb = params.getAs<mlir::DenseI64ArrayAttr>("lhs_batching_dimensions");
  auto lhs = TypeOf(dot.getInputs()[0]), rhs = TypeOf(dot.getInputs()[1]);
  return lc && rc && (!lb || lb.empty()) && lc.size() == 1 && lc[0] == lhs.getRank() - 1 &&
         lhs.getRank() >= 2 && rhs.getRank() == 2 && rc.size() == 1 &&
         lhs.getElementType().isF32() && rhs.getElementType().isF32() &&
         TypeOf(dot.getResult(0)).getElementType().isF32();
}

// The fused op's params: the dot's contraction and the collective's groups.
mlir::DictionaryAttr FusedParams(mlir::OpBuilder& b, KernelOp dot, KernelOp collective,
                                 llvm::StringRef dim_name) {
  mlir::NamedAttrList params;
  for (llvm::StringRef name : {"lhs_contracting_dimensions", "rhs_contracting_dimensions"})
    params.set(name, dot.getParams().get(name));
  params.set(dim_name, b.getI64IntegerAttr(0));
  for (llvm::StringRef name : {"replica_groups", "group_size"})
    if (mlir::Attribute a = collective.getParams().get(name)) params.set(name, a);
  return params.getDictionary(b.getContext());
}

struct FuseCollectiveMatmulPass : impl::FuseCollectiveMatmulBase<FuseCollectiveMatmulPass> {
  void runOnOperation() override {
    llvm::SmallVector<KernelOp> dots;
    getOperation().walk([&](KernelOp k) {
      if (k.getKind() == "dot_general") dots.push_back(k);
    });
    for (KernelOp dot : dots) {
      if (!FusableDot(dot)) continue;
      mlir::OpBuilder b(dot);
      KernelOp gather = Kernel(dot.getInputs()[0], "all_gather");
      if (gather && gather->hasOneUse() && IntParam(gather, "all_gather_dim", -1) == 0) {
        auto fused = KernelOp::create(b, dot.getLoc(), dot->getResultTypes(),
                                      b.getStringAttr("brt.all_gather_matmul"),
                                      mlir::ValueRange{gather.getInputs()[0], dot.getInputs()[1]},
                                      FusedParams(b, dot, gather, "all_gather_dim"));
        dot.getResult(0).replaceAllUsesWith(fused.getResult(0));
        dot.erase();
        gather.erase();
        continue;
      }
      if (!dot->hasOneUse()) continue;
      auto scatter = mlir::dyn_cast<KernelOp>(*dot->getUsers().begin());
      auto reducer = scatter ? scatter.getParams().getAs<mlir::StringAttr>("reducer") : nullptr;
      if (!scatter || scatter.getKind() != "reduce_scatter" || !reducer ||
          reducer.getValue() != "add" || IntParam(scatter, "scatter_dimension", -1) != 0)
        continue;
      b.setInsertionPoint(scatter);
      auto fused = KernelOp::create(b, scatter.getLoc(), scatter->getResultTypes(),
                                    b.getStringAttr("brt.matmul_reduce_scatter"), dot.getInputs(),
                                    FusedParams(b, dot, scatter, "scatter_dimension"));
      scatter.getResult(0).replaceAllUsesWith(fused.getResult(0));
      scatter.erase();
      dot.erase();
    }
  }
};

}  // namespace
}  // namespace brt::bridge

// brt-opt: runs single brt passes (and MLIR's) on brt dialect text; used by
// the lit tests in tests/lit.
#include "BrtDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "passes/Passes.h"

int main(int argc, char** argv) {
  brt::bridge::RegisterPasses();
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, brt::bridge::BrtDialect>();
  return mlir::asMainReturnCode(mlir::MlirOptMain(argc, argv, "brt pass driver\n", registry));
}

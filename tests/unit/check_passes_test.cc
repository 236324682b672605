// brt-compile --check-passes (compiler_bridge/passes/CheckPasses.h): the
// real pipeline keeps a program's results; a wrong pass planted in it is the
// one named.
#include "passes/CheckPasses.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "BrtDialect.h"
#include "import/Import.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"

namespace brt::bridge {
namespace {

// s - x and relu((x - y) @ w) + (x - y) (x, y, s: [4, 3], w: [3, 3]), where
// the donated argument `s` (state) is replaced by s - x, its first result.
constexpr const char* kProgram = R"mlir(
"builtin.module"() ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {tf.aliasing_output = 0 : i32}],
                  function_type = (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3x3xf32>, tensor<4x3xf32>)
                      -> (tensor<4x3xf32>, tensor<4x3xf32>), sym_name = "main"}> ({
  ^bb0(%x: tensor<4x3xf32>, %y: tensor<4x3xf32>, %w: tensor<3x3xf32>, %s: tensor<4x3xf32>):
    %0 = "stablehlo.subtract"(%x, %y) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %1 = "stablehlo.dot_general"(%0, %w) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>}> : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
    %2 = "stablehlo.constant"() <{value = dense<0.0> : tensor<4x3xf32>}> : () -> tensor<4x3xf32>
    %3 = "stablehlo.maximum"(%1, %2) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %4 = "stablehlo.add"(%3, %0) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %5 = "stablehlo.subtract"(%s, %x) : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    "func.return"(%5, %4) : (tensor<4x3xf32>, tensor<4x3xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)mlir";

// The planted wrong pass: swaps the operands of every brt.subtract.
struct SwapSubtractPass
    : mlir::PassWrapper<SwapSubtractPass, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(SwapSubtractPass)
  llvm::StringRef getArgument() const override { return "swap-subtract"; }
  void runOnOperation() override {
    getOperation().walk([](SubOp k) {
      mlir::Value a = k.getInputs()[0], b = k.getInputs()[1];
      k->setOperands({b, a});
    });
  }
};

class CheckPassesTest : public ::testing::Test {
 protected:
  CheckPassesTest() { PrepareContext(context_); }
  mlir::OwningOpRef<mlir::ModuleOp> Import(const char* text) {
    ImportResult imported = ImportStableHlo(context_, text, "check_passes_test");
    EXPECT_TRUE(imported.module) << imported.error;
    return std::move(imported.module);
  }
  mlir::MLIRContext context_;
};

TEST_F(CheckPassesTest, RealPipelineKeepsTheResults) {
  auto module = Import(kProgram);
  ASSERT_TRUE(module);
  const CheckPassesReport report = CheckPasses(*module, CheckedPipeline({.target = "cpu"}), 0);
  ASSERT_TRUE(report.error.empty()) << report.error;
  EXPECT_FALSE(report.change) << Describe(*report.change, 0);
  EXPECT_EQ(report.steps.size(), CompilerPipeline({.target = "cpu"}).size());
  EXPECT_EQ(report.steps.back().name, "place");
  // The subtract, matmul with relu and add end as fewer runtime ops.
  EXPECT_LT(report.steps.back().runtime_ops, report.runtime_ops);
}

TEST_F(CheckPassesTest, NamesThePlantedPass) {
  auto module = Import(kProgram);
  ASSERT_TRUE(module);
  std::vector<PipelineStep> steps = CheckedPipeline({.target = "cpu"});
  auto simplify = std::find_if(steps.begin(), steps.end(),
                               [](const PipelineStep& s) { return s.name == "simplify"; });
  ASSERT_NE(simplify, steps.end());
  const int planted_number = static_cast<int>(simplify - steps.begin()) + 2;
  steps.insert(simplify + 1, {"swap-subtract", std::make_unique<SwapSubtractPass>()});
  const CheckPassesReport report = CheckPasses(*module, std::move(steps), 7);
  ASSERT_TRUE(report.error.empty()) << report.error;
  ASSERT_TRUE(report.change);
  EXPECT_EQ(report.change->name, "swap-subtract");
  EXPECT_EQ(report.change->number, planted_number);
  EXPECT_EQ(report.change->output, "result0");
  EXPECT_EQ(report.change->element.size(), 2u);  // of s - x, written in place of s
  EXPECT_NE(report.change->before, report.change->after);
  EXPECT_GT(report.change->max_abs_difference, 0.1);
  // Every step before it was checked and kept the results.
  ASSERT_EQ(report.steps.size(), static_cast<size_t>(planted_number - 1));
  EXPECT_EQ(report.steps.back().name, "simplify");
  const std::string message = Describe(*report.change, 7);
  EXPECT_NE(message.find("results change after pass 'swap-subtract' (step " +
                         std::to_string(planted_number) + "): output 'result0' element ["),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("inputs from seed 7)"), std::string::npos) << message;
}

TEST_F(CheckPassesTest, RefusesCollectives) {
  auto module = Import(R"mlir(
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>), sym_name = "main"}> ({
  ^bb0(%x: tensor<4xf32>):
    %0 = "stablehlo.partition_id"() : () -> tensor<ui32>
    "func.return"(%x, %0) : (tensor<4xf32>, tensor<ui32>) -> ()
  }) : () -> ()
}) : () -> ()
)mlir");
  ASSERT_TRUE(module);
  const CheckPassesReport report = CheckPasses(*module, CheckedPipeline({.target = "cpu"}), 0);
  EXPECT_FALSE(report.passed());
  EXPECT_NE(report.error.find("cannot check this program: 'partition_id' at "), std::string::npos)
      << report.error;
  EXPECT_NE(report.error.find("is a collective"), std::string::npos) << report.error;
}

TEST_F(CheckPassesTest, CudaTargetChecksTheStepsBeforePlace) {
  std::vector<PipelineStep> steps = CheckedPipeline({.target = "cuda"});
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().name, "bucket-all-reduce");
}

}  // namespace
}  // namespace brt::bridge

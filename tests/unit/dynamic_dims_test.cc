// Symbolic dimensions as expressions (format 1.6): a dimension may be an
// integer expression of the function's symbols, fixed by the inputs that
// hold a symbol alone; constraints between symbols are checked at bind time.
// Checked against hand-computed values, with the errors a user would see.
#include <numeric>

#include "brt_generated.h"
#include "dim_expr.h"
#include "test_util.h"

namespace brt::test {
namespace {

int64_t Eval(const std::string& text, std::vector<int64_t> values,
             std::vector<std::string> symbols = {"b", "s"}) {
  auto e = core::DimExpr::Parse(text, &symbols);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status().ToString();
  auto v = e->Evaluate(values);
  EXPECT_TRUE(v.ok()) << text << ": " << v.status().ToString();
  return v.ok() ? *v : -999;
}

TEST(DimExpr, ArithmeticFollowsJaxsIntegerSemantics) {
  EXPECT_EQ(Eval("2*b + 1", {5, 0}), 11);
  EXPECT_EQ(Eval("b - 2*s", {5, 4}), -3);
  EXPECT_EQ(Eval("-b*3", {5, 0}), -15);
  EXPECT_EQ(Eval("(b + s)*(b - s)", {5, 3}), 16);
  // Floor division and mod take the divisor's sign, as Python and JAX do.
  EXPECT_EQ(Eval("floordiv(-b, 8)", {3, 0}), -1);
  EXPECT_EQ(Eval("mod(-b, 8)", {3, 0}), 5);
  EXPECT_EQ(Eval("mod(b, -8)", {3, 0}), -5);
  EXPECT_EQ(Eval("ceildiv(b, 8)*8", {13, 0}), 16);
  EXPECT_EQ(Eval("ceildiv(b, 8)*8", {16, 0}), 16);
  EXPECT_EQ(Eval("b + mod(-b, 8)", {13, 0}), 16);
  EXPECT_EQ(Eval("max(min(b, s), 2)", {7, 1}), 2);
  EXPECT_EQ(Eval("  max( b ,s )  ", {7, 9}), 9);
  std::vector<std::string> symbols;
  auto alone = core::DimExpr::Parse("seq_len", &symbols);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(alone->AsSymbol(), 0);
  EXPECT_EQ(symbols, std::vector<std::string>{"seq_len"});
}

TEST(DimExpr, MalformedTextAndBadValuesAreRefusedSayingWhy) {
  std::vector<std::string> symbols;
  ExpectError(core::DimExpr::Parse("2*", &symbols).status(), {"'2*'", "expected", "offset 2"});
  ExpectError(core::DimExpr::Parse("b +* 2", &symbols).status(), {"offset"});
  ExpectError(core::DimExpr::Parse("foo(b, 2)", &symbols).status(), {"unknown function 'foo'"});
  ExpectError(core::DimExpr::Parse("mod(b)", &symbols).status(), {"expected ','"});
  ExpectError(core::DimExpr::Parse("b $ 2", &symbols).status(), {"unexpected '$'"});
  ExpectError(core::DimExpr::Parse("99999999999999999999", &symbols).status(), {"out of range"});
  ExpectError(
      core::DimExpr::Parse(std::string(200, '(') + "b" + std::string(200, ')'), &symbols).status(),
      {"nested too deeply"});
  ExpectError(core::DimExpr::Parse(std::string(5000, 'b'), &symbols).status(), {"longer than"});
  auto zero = core::DimExpr::Parse("floordiv(b, s)", &symbols);
  ASSERT_TRUE(zero.ok());
  ExpectError(zero->Evaluate({4, 0}).status(), {"floordiv(b, s)", "divides by zero"});
  auto huge = core::DimExpr::Parse("b*b*b*b", &symbols);
  ASSERT_TRUE(huge.ok());
  ExpectError(huge->Evaluate({int64_t{1} << 20, 1}).status(), {"overflows"});
}

// x [b, 3] -> concatenate(x, x) [2*b, 3] and reshape(x) [3*b]; y must be
// [ceildiv(b, 4)*4] and is doubled.
void BuildExpressionProgram(ExecutableBuilder& builder) {
  FunctionBuilder& f = builder.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {"b", 3});
  ValueId y = f.Input("y", DType::kF32, {"ceildiv(b, 4)*4"});
  f.Output("twice", f.Op("concatenate", {x, x}, {{DType::kF32, {"2*b", 3}}},
                         {{"dimension", int64_t{0}}})[0]);
  f.Output("flat", f.Op("reshape", {x}, {{DType::kF32, {"3*b"}}})[0]);
  f.Output("y2", f.Op("add", {y, y}, {{DType::kF32, {"ceildiv(b, 4)*4"}}})[0]);
  f.AddConstraint("b >= 2");
}

TEST(DynamicDims, ExpressionShapesFollowTheBoundInputs) {
  ExecutableBuilder builder("dynamic-dims-test");
  BuildExpressionProgram(builder);
  auto session = LoadBuilt(builder);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest().value());
  for (int64_t b : {2, 5, 9}) {
    const int64_t padded = (b + 3) / 4 * 4;
    HostTensor x = Random(DType::kF32, {b, 3}, Rng());
    HostTensor y = Random(DType::kF32, {padded}, Rng());
    ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
    ASSERT_TRUE(ctx->Bind("y", y.view()).ok());
    Status ran = ctx->Run();
    ASSERT_TRUE(ran.ok()) << ran.ToString();
    const Tensor twice = ctx->Output("twice").value();
    const Tensor y2 = ctx->Output("y2").value();
    ASSERT_EQ(twice.shape(), (std::vector<int64_t>{2 * b, 3}));
    EXPECT_EQ(ctx->Output("flat")->shape(), (std::vector<int64_t>{3 * b}));
    ASSERT_EQ(y2.shape(), (std::vector<int64_t>{padded}));
    for (int64_t i = 0; i < 3 * b; ++i) {
      EXPECT_EQ(twice.data_as<float>()[i], x.as<float>()[i]);
      EXPECT_EQ(twice.data_as<float>()[3 * b + i], x.as<float>()[i]);
    }
    for (int64_t i = 0; i < padded; ++i) EXPECT_EQ(y2.data_as<float>()[i], 2 * y.as<float>()[i]);
  }
}

TEST(DynamicDims, ViolationsNameTheExpressionAndTheSessionStaysUsable) {
  ExecutableBuilder builder("dynamic-dims-test");
  BuildExpressionProgram(builder);
  auto session = LoadBuilt(builder);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest().value());
  HostTensor x = Random(DType::kF32, {5, 3}, Rng());
  HostTensor short_y = Random(DType::kF32, {7}, Rng());
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  ASSERT_TRUE(ctx->Bind("y", short_y.view()).ok());
  ExpectError(ctx->Run(), {"'y'", "dimension 0 is 7", "'ceildiv(b, 4)*4' is 8"});
  HostTensor one = Random(DType::kF32, {1, 3}, Rng());
  HostTensor y4 = Random(DType::kF32, {4}, Rng());
  ASSERT_TRUE(ctx->Bind("x", one.view()).ok());
  ASSERT_TRUE(ctx->Bind("y", y4.view()).ok());
  ExpectError(ctx->Run(), {"constraint 'b >= 2'", "1 >= 2", "b = 1"});
  HostTensor y8 = Random(DType::kF32, {8}, Rng());
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  ASSERT_TRUE(ctx->Bind("y", y8.view()).ok());
  Status ran = ctx->Run();
  EXPECT_TRUE(ran.ok()) << ran.ToString();
}

TEST(DynamicDims, UnloadableExpressionsAreRefusedAtLoad) {
  {
    ExecutableBuilder builder;
    FunctionBuilder& f = builder.AddFunction("main");
    ValueId x = f.Input("x", DType::kF32, {"2*b"});  // b is never alone
    f.Output("y", f.Op("negate", {x}, {{DType::kF32, {"2*b"}}})[0]);
    ExpectError(LoadBuilt(builder).status(), {"function 'main'", "'b'", "not alone"});
  }
  {
    ExecutableBuilder builder;
    FunctionBuilder& f = builder.AddFunction("main");
    ValueId x = f.Input("x", DType::kF32, {"b"});
    f.Output("y", f.Op("concatenate", {x, x}, {{DType::kF32, {"2*b+"}}},
                       {{"dimension", int64_t{0}}})[0]);
    ExpectError(LoadBuilt(builder).status(), {"function 'main'", "'2*b+'", "expected"});
  }
  {
    ExecutableBuilder builder;
    FunctionBuilder& f = builder.AddFunction("main");
    ValueId x = f.Input("x", DType::kF32, {"b"});
    f.Output("y", f.Op("negate", {x}, {{DType::kF32, {"b"}}})[0]);
    f.AddConstraint("b is big");
    ExpectError(LoadBuilt(builder).status(), {"constraint 'b is big'", "no relation"});
  }
}

// Plans are kept per set of symbol values, at most max_shape_plans of them:
// a shape seen before is a hit, a new one a miss that reports its cost, and
// the least recently used plan goes first.
TEST(DynamicDims, ShapePlansAreCachedBoundedAndCounted) {
  ExecutableBuilder builder("dynamic-dims-test");
  BuildExpressionProgram(builder);
  SessionOptions options = TestOptions();
  options.max_shape_plans = 2;
  auto session = LoadBuilt(builder, options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest().value());
  auto run = [&](int64_t b) {
    HostTensor x = Random(DType::kF32, {b, 3}, Rng());
    HostTensor y = Random(DType::kF32, {(b + 3) / 4 * 4}, Rng());
    ASSERT_TRUE(ctx->Bind("x", x.view(), Ownership::kCopied).ok());
    ASSERT_TRUE(ctx->Bind("y", y.view(), Ownership::kCopied).ok());
    Status ran = ctx->Run();
    ASSERT_TRUE(ran.ok()) << ran.ToString();
  };
  for (int64_t b : {2, 2, 2, 3, 2, 4, 2})  // plans: {2}, {2,3}, hit 2, {2,4} drops 3, hit 2
    run(b);
  auto stats = (*session)->shape_plan_stats();
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->misses, 3);
  EXPECT_EQ(stats->hits, 4);
  EXPECT_EQ(stats->evictions, 1);
  EXPECT_EQ(stats->plans, 2);
  EXPECT_GT(stats->last_plan_ns, 0);
  EXPECT_GE(stats->total_plan_ns, stats->last_plan_ns);
  run(3);  // dropped before: planned again
  EXPECT_EQ((*session)->shape_plan_stats()->misses, 4);
  options.max_shape_plans = 0;
  ExpectError(LoadBuilt(builder, options).status(), {"max_shape_plans", ">= 1"});
}

}  // namespace
}  // namespace brt::test

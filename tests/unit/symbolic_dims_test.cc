// The compiler bridge's symbolic sizes (compiler_bridge/SymbolicDims.h):
// canonical forms, the text the runtime parses, floor/ceil division and mod
// by constants, exact division, bounds, and tensor types carrying them.
#include "SymbolicDims.h"

#include <gtest/gtest.h>

#include "mlir/IR/MLIRContext.h"

namespace brt::bridge {
namespace {

SymDim S(const char* name) { return SymDim::Symbol(name); }

TEST(SymDimTest, EqualSizesAreEqualAndPrintTheSame) {
  const SymDim b = S("b"), s = S("s");
  EXPECT_EQ(b + b, 2 * b);
  EXPECT_EQ((b + s) * (b - s), b * b - s * s);
  EXPECT_EQ((b * s * 384).Text(), "384*b*s");
  EXPECT_EQ((s - 4 * b + 3).Text(), "-4*b + s + 3");
  EXPECT_EQ(b - b, SymDim(0));
  EXPECT_EQ((b - b).Constant(), 0);
  EXPECT_FALSE(b.Constant());
}

TEST(SymDimTest, TextParsesBackToTheSameSize) {
  const SymDim b = S("b"), s = S("s");
  for (const SymDim& d : {b * s * 384, s - 4 * b + 3, SymDim::FloorDiv(s + 7, 8) * 8,
                          SymDim::Mod(s, 8), SymDim::Min(s, b), SymDim::CeilDiv(2 * s + 1, 4)}) {
    std::optional<SymDim> parsed = SymDim::Parse(d.Text());
    ASSERT_TRUE(parsed) << d.Text();
    EXPECT_EQ(*parsed, d) << d.Text();
  }
  EXPECT_FALSE(SymDim::Parse("b +"));
  EXPECT_FALSE(SymDim::Parse("frob(b, 2)"));
  EXPECT_FALSE(SymDim::Parse("99999999999999999999"));
}

TEST(SymDimTest, DivisionByConstantsTakesOutWhatDivides) {
  const SymDim s = S("s");
  EXPECT_EQ(SymDim::FloorDiv(8 * s + 16, 8), s + 2);
  EXPECT_EQ(SymDim::FloorDiv(8 * s + 7, 8), s);  // floordiv(8s + 7, 8) = s + floordiv(7, 8)
  EXPECT_EQ(SymDim::FloorDiv(s + 7, 8).Text(), "floordiv(s + 7, 8)");
  EXPECT_EQ(SymDim::CeilDiv(8 * s + 1, 8), s + 1);
  EXPECT_EQ(SymDim::Mod(8 * s + 11, 8), SymDim(3));
  EXPECT_EQ(SymDim::FloorDiv(-7, 2), SymDim(-4));  // Python's floor, not C++'s truncation
  EXPECT_EQ(SymDim::Mod(-7, 2), SymDim(1));
}

TEST(SymDimTest, ExactDivisionBySymbolicTerms) {
  const SymDim b = S("b"), s = S("s");
  EXPECT_EQ(SymDim::FloorDiv(b * s * 384, b), s * 384);
  EXPECT_EQ((6 * b * s * s).DividedExactly(2 * s), 3 * b * s);
  EXPECT_FALSE((b * s + 1).DividedExactly(b));
  EXPECT_FALSE((3 * b).DividedExactly(2 * b));
}

TEST(SymDimTest, BoundsTakeSymbolsAtLeastOneAndAtMostTheirMax) {
  const SymDim b = S("b"), s = S("s");
  SymDim::SetBounds({{"n", 0}}, {{"s", 512}});
  EXPECT_EQ((S("n") + 1).LowerBound(), 1);  // a size that may be 0
  EXPECT_EQ((2 * b + 1).LowerBound(), 3);
  EXPECT_EQ((512 - s).LowerBound(), 0);
  EXPECT_EQ((b - s).LowerBound(), 1 - 512);
  EXPECT_FALSE((s - b).LowerBound());  // b has no upper bound
  EXPECT_EQ(SymDim::Mod(s, 8).UpperBound(), 7);
  EXPECT_EQ(SymDim::Min(SymDim::Max(SymDim(0), s), 512), s);  // clamp of a length
  EXPECT_EQ(SymDim::Min(b, s).Text(), "min(b, s)");
  SymDim::SetBounds({}, {});
  EXPECT_FALSE((512 - s).LowerBound());
}

TEST(SymDimTest, TensorTypesCarryTheirSizes) {
  mlir::MLIRContext context;
  const mlir::Type f32 = mlir::Float32Type::get(&context);
  const SymDim b = S("b");
  auto type = SymbolicTensorType({b, 64, 2 * b}, f32);
  EXPECT_TRUE(HasSymbolicDims(type));
  auto sizes = SymbolicShape(type);
  ASSERT_TRUE(sizes);
  EXPECT_EQ((*sizes)[0], b);
  EXPECT_EQ((*sizes)[1], SymDim(64));
  EXPECT_EQ((*sizes)[2], 2 * b);
  EXPECT_FALSE(HasSymbolicDims(SymbolicTensorType({3, 4}, f32)));
  EXPECT_FALSE(SymbolicShape(mlir::RankedTensorType::get({mlir::ShapedType::kDynamic}, f32)));
  EXPECT_FALSE(SameShape(type, SymbolicTensorType({b, 64, b}, f32)));
  EXPECT_TRUE(SameShape(type, SymbolicTensorType({b, 64, b + b}, f32)));
}

}  // namespace
}  // namespace brt::bridge

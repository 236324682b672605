// Elementwise ops against float64 references (std:: math in double) and
// hand-computed cases for the integer and conversion edge semantics. Over 500
// lines: one file per op family, so its _cuda run covers the whole family.
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "test_util.h"

namespace brt::test {
namespace {

using Ref1 = std::function<double(double)>;
using Ref2 = std::function<double(double, double)>;

struct UnaryCase {
  const char* kind;
  Ref1 ref;
  double lo, hi;  // input domain
};

const UnaryCase kUnary[] = {
    {"negate", [](double x) { return -x; }, -3, 3},
    {"abs", [](double x) { return std::fabs(x); }, -3, 3},
    {"exponential", [](double x) { return std::exp(x); }, -4, 4},
    {"exponential_minus_one", [](double x) { return std::expm1(x); }, -1e-3, 1e-3},
    {"log", [](double x) { return std::log(x); }, 0.01, 10},
    {"log_plus_one", [](double x) { return std::log1p(x); }, -1e-3, 1e-3},
    {"sqrt", [](double x) { return std::sqrt(x); }, 0, 10},
    {"rsqrt", [](double x) { return 1 / std::sqrt(x); }, 0.01, 10},
    {"tanh", [](double x) { return std::tanh(x); }, -3, 3},
    {"logistic", [](double x) { return 1 / (1 + std::exp(-x)); }, -6, 6},
    {"sine", [](double x) { return std::sin(x); }, -6, 6},
    {"cosine", [](double x) { return std::cos(x); }, -6, 6},
    {"cbrt", [](double x) { return std::cbrt(x); }, -8, 8},
    {"floor", [](double x) { return std::floor(x); }, -5, 5},
    {"ceil", [](double x) { return std::ceil(x); }, -5, 5},
    {"round_nearest_even", [](double x) { return std::nearbyint(x); }, -5, 5},
    {"sign", [](double x) { return x > 0   ? 1.0
                                   : x < 0 ? -1.0
                                           : 0.0; }, -2, 2},
    {"round_nearest_afz", [](double x) { return std::round(x); }, -5, 5},
    {"tan", [](double x) { return std::tan(x); }, -1.4, 1.4},
    {"erf", [](double x) { return std::erf(x); }, -3, 3},
    {"erfc", [](double x) { return std::erfc(x); }, -3, 9},
    {"lgamma", [](double x) { return std::lgamma(x); }, 0.1, 8},
    // The reference inverts std::erf by bisection.
    {"erf_inv",
     [](double y) {
       double lo = -6, hi = 6;
       for (int i = 0; i < 200; ++i) (std::erf((lo + hi) / 2) < y ? lo : hi) = (lo + hi) / 2;
       return (lo + hi) / 2;
     },
     -0.999, 0.999},
    {"sinh", [](double x) { return std::sinh(x); }, -4, 4},
    {"cosh", [](double x) { return std::cosh(x); }, -4, 4},
    {"asin", [](double x) { return std::asin(x); }, -0.99, 0.99},
    {"acos", [](double x) { return std::acos(x); }, -0.99, 0.99},
    {"atan", [](double x) { return std::atan(x); }, -5, 5},
    {"asinh", [](double x) { return std::asinh(x); }, -5, 5},
    {"acosh", [](double x) { return std::acosh(x); }, 1.01, 8},
    {"atanh", [](double x) { return std::atanh(x); }, -0.99, 0.99},
};

TEST(UnaryOps, MatchFloat64ReferenceOnRandomData) {
  for (const auto& c : kUnary) {
    for (auto shape : std::vector<std::vector<int64_t>>{{7, 33}, {}, {0, 4}, {1}}) {
      HostTensor x = Random(DType::kF32, shape, Rng(), c.lo, c.hi);
      auto out = MustRunOp({c.kind, {x}, {{DType::kF32, Dims(shape)}}});
      std::vector<double> ref;
      for (double v : x.ToDouble()) ref.push_back(c.ref(v));
      EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6)
          << c.kind << " shape " << FormatShape(shape);
    }
  }
}

TEST(UnaryOps, HalfAndBfloat16ComputeInFloat) {
  for (DType t : {DType::kF16, DType::kBF16, DType::kF64}) {
    HostTensor x = Random(t, {64}, Rng(), -2, 2);
    auto out = MustRunOp({"tanh", {x}, {{t, {64}}}});
    std::vector<double> ref;
    for (double v : x.ToDouble()) ref.push_back(std::tanh(v));
    EXPECT_LE(RelError(out[0].ToDouble(), ref), t == DType::kF64 ? 1e-12 : 1e-2) << DTypeName(t);
  }
}

TEST(UnaryOps, IntegerNegateAbsSignWrapAndNot) {
  HostTensor x = HostTensor::FromDouble(DType::kI32, {4}, {-5, 0, 7, -2147483648.0});
  EXPECT_EQ(MustRunOp({"negate", {x}, {{DType::kI32, {4}}}})[0].ToDouble(),
            (std::vector<double>{5, 0, -7, -2147483648.0}));
  EXPECT_EQ(MustRunOp({"abs", {x}, {{DType::kI32, {4}}}})[0].ToDouble(),
            (std::vector<double>{5, 0, 7, -2147483648.0}));
  EXPECT_EQ(MustRunOp({"sign", {x}, {{DType::kI32, {4}}}})[0].ToDouble(),
            (std::vector<double>{-1, 0, 1, -1}));
  EXPECT_EQ(MustRunOp({"not", {x}, {{DType::kI32, {4}}}})[0].ToDouble(),
            (std::vector<double>{4, -1, -8, 2147483647}));
  HostTensor p = HostTensor::FromDouble(DType::kI1, {3}, {1, 0, 1});
  EXPECT_EQ(MustRunOp({"not", {p}, {{DType::kI1, {3}}}})[0].ToDouble(),
            (std::vector<double>{0, 1, 0}));
}

struct BinaryCase {
  const char* kind;
  Ref2 ref;
  double lo, hi;
};

const BinaryCase kBinary[] = {
    {"add", [](double a, double b) { return a + b; }, -2, 2},
    {"subtract", [](double a, double b) { return a - b; }, -2, 2},
    {"multiply", [](double a, double b) { return a * b; }, -2, 2},
    {"divide", [](double a, double b) { return a / b; }, 0.5, 2},
    {"maximum", [](double a, double b) { return std::max(a, b); }, -2, 2},
    {"minimum", [](double a, double b) { return std::min(a, b); }, -2, 2},
    {"power", [](double a, double b) { return std::pow(a, b); }, 0.1, 2},
    {"remainder", [](double a, double b) { return std::fmod(a, b); }, 0.5, 5},
    {"atan2", [](double a, double b) { return std::atan2(a, b); }, -2, 2},
};

// (lhs shape, rhs shape, result shape): numpy broadcasting incl. rank 0 and size 0.
const std::vector<std::array<std::vector<int64_t>, 3>> kBroadcastShapes = {
    {{{5, 6}, {5, 6}, {5, 6}}},
    {{{3, 4}, {4}, {3, 4}}},
    {{{2, 1, 5}, {3, 1}, {2, 3, 5}}},
    {{{}, {4, 3}, {4, 3}}},
    {{{4, 0}, {1}, {4, 0}}},
    {{{1}, {}, {1}}},
    {{{2, 3, 1}, {1, 3, 7}, {2, 3, 7}}},
};

TEST(BinaryOps, BroadcastAgainstFloat64Reference) {
  for (const auto& c : kBinary) {
    for (const auto& [ls, rs, os] : kBroadcastShapes) {
      HostTensor a = Random(DType::kF32, ls, Rng(), c.lo, c.hi);
      HostTensor b = Random(DType::kF32, rs, Rng(), c.lo, c.hi);
      auto out = MustRunOp({c.kind, {a, b}, {{DType::kF32, Dims(os)}}});
      std::vector<double> ref(NumElements(os).value());
      for (int64_t i = 0; i < static_cast<int64_t>(ref.size()); ++i) {
        auto idx = Unravel(i, os);
        auto pick = [&](const HostTensor& t) {
          std::vector<int64_t> sub;
          for (size_t d = 0; d < t.shape.size(); ++d) {
            int64_t o = idx[idx.size() - t.shape.size() + d];
            sub.push_back(t.shape[d] == 1 ? 0 : o);
          }
          return t.Get(Ravel(sub, t.shape));
        };
        ref[i] = c.ref(pick(a), pick(b));
      }
      EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6)
          << c.kind << " " << FormatShape(ls) << " x " << FormatShape(rs);
    }
  }
}

bool TakesFloats(std::string_view domain) { return domain != "kIntegral" && domain != "kInteger"; }

// Every float op of the op registry has a float64 reference above, so a new
// row cannot go untested (and the CPU and emulated CUDA providers both run
// this file).
TEST(ElementwiseOps, EveryRegistryFloatOpHasAReferenceCase) {
  auto has = [](const auto& cases, std::string_view kind) {
    for (const auto& c : cases)
      if (kind == c.kind) return true;
    return false;
  };
#define BRT_UNARY(e, kind, domain, ...) \
  if (TakesFloats(#domain))             \
    EXPECT_TRUE(has(kUnary, kind)) << kind << " (unary) has no float64 reference case";
#define BRT_BINARY(e, kind, domain, ...) \
  if (TakesFloats(#domain))              \
    EXPECT_TRUE(has(kBinary, kind)) << kind << " (binary) has no float64 reference case";
#include "brt/ops.def"
}

// f32 tensors of 2^16 elements or more run on oneDNN primitives (exp, log,
// tanh, logistic, sqrt, abs, negate; add, subtract, multiply, divide with one
// broadcast operand); the float64 references must still hold.
TEST(LargeElementwise, OneDnnPathMatchesFloat64) {
  const std::vector<int64_t> shape = {256, 300};
  for (const auto& c : kUnary) {
    const std::string kind = c.kind;
    if (kind != "exponential" && kind != "log" && kind != "tanh" && kind != "logistic" &&
        kind != "sqrt" && kind != "abs" && kind != "negate")
      continue;
    HostTensor x = Random(DType::kF32, shape, Rng(), c.lo, c.hi);
    auto out = MustRunOp({c.kind, {x}, {{DType::kF32, Dims(shape)}}});
    std::vector<double> ref;
    for (double v : x.ToDouble()) ref.push_back(c.ref(v));
    // oneDNN's vectorized transcendentals are a few ulp off (log: ~1.3e-6).
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-5) << c.kind;
  }
  for (const auto& c : kBinary) {
    const std::string kind = c.kind;
    if (kind != "add" && kind != "subtract" && kind != "multiply" && kind != "divide") continue;
    // full x row-broadcast, and the broadcast operand first (swapped when it commutes)
    for (bool broadcast_first : {false, true}) {
      HostTensor full = Random(DType::kF32, shape, Rng(), c.lo, c.hi);
      HostTensor row = Random(DType::kF32, {300}, Rng(), c.lo, c.hi);
      const HostTensor& a = broadcast_first ? row : full;
      const HostTensor& b = broadcast_first ? full : row;
      auto out = MustRunOp({c.kind, {a, b}, {{DType::kF32, Dims(shape)}}});
      std::vector<double> ref(full.numel());
      for (int64_t i = 0; i < full.numel(); ++i)
        ref[i] = broadcast_first ? c.ref(row.Get(i % 300), full.Get(i))
                                 : c.ref(full.Get(i), row.Get(i % 300));
      EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6)
          << c.kind << (broadcast_first ? " (row first)" : "");
    }
  }
}

TEST(UnaryOps, RoundingTiesGoEvenOrAwayFromZero) {
  HostTensor x = HostTensor::FromDouble(DType::kF32, {5}, {0.5, 1.5, 2.5, -0.5, -2.5});
  EXPECT_EQ(MustRunOp({"round_nearest_even", {x}, {{DType::kF32, {5}}}})[0].ToDouble(),
            (std::vector<double>{0, 2, 2, -0, -2}));
  EXPECT_EQ(MustRunOp({"round_nearest_afz", {x}, {{DType::kF32, {5}}}})[0].ToDouble(),
            (std::vector<double>{1, 2, 3, -1, -3}));
}

TEST(BinaryOps, MaximumPropagatesNaN) {
  HostTensor a = HostTensor::FromDouble(DType::kF32, {3}, {NAN, 1, 2});
  HostTensor b = HostTensor::FromDouble(DType::kF32, {3}, {0, NAN, 1});
  auto out = MustRunOp({"maximum", {a, b}, {{DType::kF32, {3}}}})[0].ToDouble();
  EXPECT_TRUE(std::isnan(out[0]));
  EXPECT_TRUE(std::isnan(out[1]));
  EXPECT_EQ(out[2], 2);
}

TEST(BinaryOps, IntegerSemanticsFollowXla) {
  auto run = [](const char* kind, std::vector<double> a, std::vector<double> b) {
    return MustRunOp({kind,
                      {HostTensor::FromDouble(DType::kI32, {static_cast<int64_t>(a.size())}, a),
                       HostTensor::FromDouble(DType::kI32, {static_cast<int64_t>(b.size())}, b)},
                      {{DType::kI32, {static_cast<int64_t>(a.size())}}}})[0]
        .ToDouble();
  };
  const double kMin = -2147483648.0;
  EXPECT_EQ(run("divide", {7, -7, 5, kMin}, {2, 2, 0, -1}), (std::vector<double>{3, -3, -1, kMin}));
  EXPECT_EQ(run("remainder", {7, -7, 5, kMin}, {2, 2, 0, -1}), (std::vector<double>{1, -1, 5, 0}));
  EXPECT_EQ(run("add", {2147483647}, {1}), (std::vector<double>{kMin}));
  EXPECT_EQ(run("multiply", {65536}, {65536}), (std::vector<double>{0}));
  EXPECT_EQ(run("power", {3, 2, -1, 2}, {4, -1, 3, 0}), (std::vector<double>{81, 0, -1, 1}));
  EXPECT_EQ(run("and", {12}, {10}), (std::vector<double>{8}));
  EXPECT_EQ(run("or", {12}, {10}), (std::vector<double>{14}));
}

TEST(BinaryOps, BooleanAndOr) {
  HostTensor a = HostTensor::FromDouble(DType::kI1, {4}, {0, 0, 1, 1});
  HostTensor b = HostTensor::FromDouble(DType::kI1, {4}, {0, 1, 0, 1});
  EXPECT_EQ(MustRunOp({"and", {a, b}, {{DType::kI1, {4}}}})[0].ToDouble(),
            (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(MustRunOp({"or", {a, b}, {{DType::kI1, {4}}}})[0].ToDouble(),
            (std::vector<double>{0, 1, 1, 1}));
}

// add and multiply on i1 are or and and (StableHLO's booleans, XLA's pred),
// on random predicates with every broadcast form of the float cases.
TEST(BinaryOps, BooleanAddIsOrAndMultiplyIsAnd) {
  for (const auto& [ls, rs, os] : kBroadcastShapes) {
    HostTensor a = Random(DType::kI1, ls, Rng(), 0, 1);
    HostTensor b = Random(DType::kI1, rs, Rng(), 0, 1);
    auto sum = MustRunOp({"add", {a, b}, {{DType::kI1, Dims(os)}}});
    auto product = MustRunOp({"multiply", {a, b}, {{DType::kI1, Dims(os)}}});
    std::vector<double> any, all;
    for (int64_t i = 0; i < NumElements(os).value(); ++i) {
      auto idx = Unravel(i, os);
      auto pick = [&](const HostTensor& t) {
        std::vector<int64_t> sub;
        for (size_t d = 0; d < t.shape.size(); ++d)
          sub.push_back(t.shape[d] == 1 ? 0 : idx[idx.size() - t.shape.size() + d]);
        return t.Get(Ravel(sub, t.shape)) != 0;
      };
      any.push_back(pick(a) || pick(b));
      all.push_back(pick(a) && pick(b));
    }
    EXPECT_EQ(sum[0].ToDouble(), any) << FormatShape(ls) << " + " << FormatShape(rs);
    EXPECT_EQ(product[0].ToDouble(), all) << FormatShape(ls) << " * " << FormatShape(rs);
    // Every result byte is 0 or 1, as i1 is stored.
    for (int64_t i = 0; i < sum[0].numel(); ++i)
      EXPECT_LE(sum[0].as<uint8_t>()[i] | product[0].as<uint8_t>()[i], 1);
  }
  // subtract and divide take no i1 (StableHLO defines them on numbers only).
  HostTensor p = HostTensor::FromDouble(DType::kI1, {2}, {0, 1});
  ExpectError(RunOp({"subtract", {p, p}, {{DType::kI1, {2}}}}).status(), {"subtract", "i1"});
}

TEST(BinaryOps, HalfPrecisionAdd) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    HostTensor a = Random(t, {3, 8}, Rng()), b = Random(t, {8}, Rng());
    auto out = MustRunOp({"add", {a, b}, {{t, {3, 8}}}});
    std::vector<double> ref;
    for (int64_t i = 0; i < 24; ++i) ref.push_back(a.Get(i) + b.Get(i % 8));
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-2) << DTypeName(t);
  }
}

TEST(BinaryOps, ShapeMismatchIsRejectedAtLoad) {
  auto r = RunOp({"add",
                  {Random(DType::kF32, {3}, Rng()), Random(DType::kF32, {4}, Rng())},
                  {{DType::kF32, {4}}}});
  ExpectError(r.status(), {"op #0 'add'", "does not broadcast"});
  r = RunOp({"add",
             {Random(DType::kF32, {3}, Rng()), Random(DType::kI32, {3}, Rng())},
             {{DType::kF32, {3}}}});
  ExpectError(r.status(), {"operand 1 is i32 but the result is f32"});
}

TEST(Compare, AllDirectionsWithBroadcast) {
  const std::pair<const char*, std::function<bool(double, double)>> dirs[] = {
      {"EQ", std::equal_to<double>()},      {"NE", std::not_equal_to<double>()},
      {"GE", std::greater_equal<double>()}, {"GT", std::greater<double>()},
      {"LE", std::less_equal<double>()},    {"LT", std::less<double>()}};
  for (DType t : {DType::kF32, DType::kI32, DType::kI64}) {
    HostTensor a = Random(t, {4, 5}, Rng(), -3, 3), b = Random(t, {5}, Rng(), -3, 3);
    for (const auto& [dir, ref] : dirs) {
      auto out =
          MustRunOp({"compare", {a, b}, {{DType::kI1, {4, 5}}}, {{"comparison_direction", dir}}});
      for (int64_t i = 0; i < 20; ++i)
        EXPECT_EQ(out[0].Get(i), ref(a.Get(i), b.Get(i % 5)) ? 1.0 : 0.0)
            << dir << " " << DTypeName(t);
    }
  }
  ExpectError(RunOp({"compare",
                     {Random(DType::kF32, {2}, Rng()), Random(DType::kF32, {2}, Rng())},
                     {{DType::kI1, {2}}},
                     {{"comparison_direction", "XX"}}})
                  .status(),
              {"comparison_direction 'XX'"});
}

TEST(Select, ScalarAndElementwisePredicate) {
  HostTensor a = Random(DType::kF32, {3, 4}, Rng()), b = Random(DType::kF32, {3, 4}, Rng());
  HostTensor p = Random(DType::kI1, {3, 4}, Rng(), 0, 1);
  auto out = MustRunOp({"select", {p, a, b}, {{DType::kF32, {3, 4}}}});
  for (int64_t i = 0; i < 12; ++i) EXPECT_EQ(out[0].Get(i), p.Get(i) ? a.Get(i) : b.Get(i));
  HostTensor scalar = HostTensor::FromDouble(DType::kI1, {}, {0});
  out = MustRunOp({"select", {scalar, a, b}, {{DType::kF32, {3, 4}}}});
  EXPECT_EQ(out[0].ToDouble(), b.ToDouble());
}

TEST(Clamp, ScalarBounds) {
  HostTensor x = Random(DType::kF32, {50}, Rng(), -3, 3);
  HostTensor lo = HostTensor::FromDouble(DType::kF32, {}, {-1}),
             hi = HostTensor::FromDouble(DType::kF32, {}, {0.5});
  auto out = MustRunOp({"clamp", {lo, x, hi}, {{DType::kF32, {50}}}});
  for (int64_t i = 0; i < 50; ++i)
    EXPECT_EQ(out[0].Get(i), static_cast<float>(std::clamp(x.Get(i), -1.0, 0.5)));
}

// StableHLO's clamp is minimum(maximum(x, lo), hi), whose maximum and
// minimum propagate NaN: a NaN x, lo or hi makes the element NaN, alone and
// fused (the fused loop and the generated CUDA kernels once dropped a NaN
// bound, CUDA's own kernel a NaN x).
TEST(Clamp, NanInAnyOperandIsNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  HostTensor lo = HostTensor::FromDouble(DType::kF32, {5}, {nan, -1, -1, -1, 2});
  HostTensor x = HostTensor::FromDouble(DType::kF32, {5}, {0.25, nan, 0.25, 3, 0.5});
  HostTensor hi = HostTensor::FromDouble(DType::kF32, {5}, {1, 1, nan, 1, 4});
  const std::vector<double> want = {nan, nan, nan, 1, 2};
  auto expect = [&](const HostTensor& out, const char* how) {
    for (int64_t i = 0; i < 5; ++i)
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(out.Get(i))) << how << " element " << i << ": " << out.Get(i);
      else
        EXPECT_EQ(out.Get(i), want[i]) << how << " element " << i;
  };
  expect(MustRunOp({"clamp", {lo, x, hi}, {{DType::kF32, {5}}}})[0], "clamp");
  expect(MustRunOp({"brt.fused_elementwise",
                    {lo, x, hi},
                    {{DType::kF32, {5}}},
                    {{"ops", "clamp"}, {"program", std::vector<int64_t>{0, 1, 2}}}})[0],
         "fused clamp");
}

// IEEE-754's maximum and minimum, as StableHLO has them: -0 orders below +0
// whatever the operands' order (they returned the second operand on a tie),
// in brt's loops (a long row takes the vector loop) and fused.
TEST(MaximumMinimum, SignedZerosInEitherOrder) {
  const int64_t n = 1000;
  std::vector<double> a(n), b(n);
  for (int64_t i = 0; i < n; ++i) a[i] = i % 2 ? 0.0 : -0.0, b[i] = i % 2 ? -0.0 : 0.0;
  HostTensor x = HostTensor::FromDouble(DType::kF32, {n}, a),
             y = HostTensor::FromDouble(DType::kF32, {n}, b);
  for (const char* kind : {"maximum", "minimum"}) {
    const bool max = std::string(kind) == "maximum";
    auto plain = MustRunOp({kind, {x, y}, {{DType::kF32, {n}}}})[0];
    auto fused = MustRunOp({"brt.fused_elementwise",
                            {x, y},
                            {{DType::kF32, {n}}},
                            {{"ops", kind}, {"program", std::vector<int64_t>{0, 1, -1}}}})[0];
    for (int64_t i = 0; i < n; i += 97) {
      EXPECT_EQ(std::signbit(plain.Get(i)), !max) << kind << " element " << i;
      EXPECT_EQ(std::signbit(fused.Get(i)), !max) << "fused " << kind << " element " << i;
    }
  }
}

TEST(Convert, FloatToIntSaturatesAndTruncates) {
  HostTensor x = HostTensor::FromDouble(DType::kF32, {6}, {1.9, -1.9, 3e9, -3e9, NAN, 0.5});
  EXPECT_EQ(MustRunOp({"convert", {x}, {{DType::kI32, {6}}}})[0].ToDouble(),
            (std::vector<double>{1, -1, 2147483647, -2147483648.0, 0, 0}));
  EXPECT_EQ(MustRunOp({"convert", {x}, {{DType::kI1, {6}}}})[0].ToDouble(),
            (std::vector<double>{1, 1, 1, 1, 1, 1}));
  HostTensor i = HostTensor::FromDouble(DType::kI64, {3}, {-7, 0, 1 << 20});
  EXPECT_EQ(MustRunOp({"convert", {i}, {{DType::kF64, {3}}}})[0].ToDouble(),
            (std::vector<double>{-7, 0, 1 << 20}));
}

template <typename T>
HostTensor Raw(DType dtype, const std::vector<T>& values) {
  HostTensor h(dtype, {static_cast<int64_t>(values.size())});
  std::memcpy(h.data(), values.data(), values.size() * sizeof(T));
  return h;
}

template <typename T>
std::vector<T> Values(const HostTensor& h) {
  return std::vector<T>(h.template as<T>(), h.template as<T>() + h.numel());
}

// u32 and u64 (what JAX's threefry computes on): wrapping arithmetic,
// unsigned divide and compare, and shifts with StableHLO's rule for amounts
// of the bit width or more, against the same written out by hand.
template <typename T>
void CheckUnsigned(DType dtype) {
  constexpr T kMax = std::numeric_limits<T>::max();
  constexpr unsigned kBits = sizeof(T) * 8;
  std::vector<T> a = {0, 1, 7, kMax, kMax / 2 + 1, 123456789, kMax - 5, 3, 0x9E3779B9u, 1000};
  std::vector<T> b = {5, 0, 1, kMax, 3, kBits - 1, kBits, kBits + 1, 17, kMax - 1};
  const std::pair<const char*, std::function<T(T, T)>> cases[] = {
      {"add", [](T x, T y) { return static_cast<T>(x + y); }},
      {"subtract", [](T x, T y) { return static_cast<T>(x - y); }},
      {"multiply", [](T x, T y) { return static_cast<T>(x * y); }},
      {"divide", [](T x, T y) { return y == 0 ? kMax : static_cast<T>(x / y); }},
      {"remainder", [](T x, T y) { return y == 0 ? x : static_cast<T>(x % y); }},
      {"maximum", [](T x, T y) { return x > y ? x : y; }},
      {"xor", [](T x, T y) { return static_cast<T>(x ^ y); }},
      {"shift_left", [](T x, T y) { return y >= kBits ? T(0) : static_cast<T>(x << y); }},
      {"shift_right_logical", [](T x, T y) { return y >= kBits ? T(0) : static_cast<T>(x >> y); }},
      {"shift_right_arithmetic",
       [](T x, T y) {
         const bool negative = (x >> (kBits - 1)) != 0;
         if (y >= kBits) return negative ? kMax : T(0);
         const T shifted = static_cast<T>(x >> y);
         return negative && y > 0 ? static_cast<T>(shifted | ~(kMax >> y)) : shifted;
       }},
  };
  for (const auto& [kind, ref] : cases) {
    auto out = MustRunOp({kind, {Raw(dtype, a), Raw(dtype, b)}, {{dtype, {10}}}});
    std::vector<T> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(ref(a[i], b[i]));
    EXPECT_EQ(Values<T>(out[0]), want) << kind << " " << DTypeName(dtype);
  }
  auto less = MustRunOp({"compare",
                         {Raw(dtype, a), Raw(dtype, b)},
                         {{DType::kI1, {10}}},
                         {{"comparison_direction", std::string("LT")}}});
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(less[0].template as<uint8_t>()[i], a[i] < b[i] ? 1 : 0)
        << DTypeName(dtype) << " LT " << i;
  // Above the signed range, a value converts as the unsigned number it is.
  auto wide = MustRunOp({"convert", {Raw(dtype, a)}, {{DType::kF64, {10}}}});
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(wide[0].Get(static_cast<int64_t>(i)), static_cast<double>(a[i]));
}

TEST(UnsignedOps, U32AndU64WrapShiftAndCompareLikeStableHlo) {
  CheckUnsigned<uint32_t>(DType::kU32);
  CheckUnsigned<uint64_t>(DType::kU64);
}

// StableHLO's negate takes every integer type: an unsigned one negates
// modulo 2^n (what jnp.negative gives on uint8). abs and sign take signed
// integers only, so the unsigned ones are refused at load, naming the dtype.
template <typename T>
void CheckUnsignedNegate(DType dtype) {
  std::vector<T> x = {0, 1, std::numeric_limits<T>::max(),
                      T(std::numeric_limits<T>::max() / 2 + 1)};
  for (int i = 0; i < 60; ++i) x.push_back(static_cast<T>(Rng()()));
  auto out = MustRunOp({"negate", {Raw(dtype, x)}, {{dtype, {static_cast<int64_t>(x.size())}}}});
  std::vector<T> want;
  for (T v : x) want.push_back(static_cast<T>(T(0) - v));
  EXPECT_EQ(Values<T>(out[0]), want) << DTypeName(dtype);
  for (const char* kind : {"abs", "sign"})
    ExpectError(
        RunOp({kind, {Raw(dtype, x)}, {{dtype, {static_cast<int64_t>(x.size())}}}}).status(),
        {kind, DTypeName(dtype)});
}

TEST(UnsignedOps, NegateWrapsModuloTwoToTheWidth) {
  CheckUnsignedNegate<uint8_t>(DType::kU8);
  CheckUnsignedNegate<uint16_t>(DType::kU16);
  CheckUnsignedNegate<uint32_t>(DType::kU32);
  CheckUnsignedNegate<uint64_t>(DType::kU64);
}

// popcnt (lax.population_count) counts the set bits of the two's-complement
// representation, on every integer type; floats and i1 are refused at load.
template <typename T>
void CheckPopcnt(DType dtype) {
  using U = std::make_unsigned_t<T>;
  std::vector<T> x = {0,
                      1,
                      T(-1),
                      std::numeric_limits<T>::min(),
                      std::numeric_limits<T>::max(),
                      T(0x55),
                      T(U(~U(0)) - 1)};
  for (int i = 0; i < 60; ++i) x.push_back(static_cast<T>(Rng()()));
  auto out = MustRunOp({"popcnt", {Raw(dtype, x)}, {{dtype, {static_cast<int64_t>(x.size())}}}});
  std::vector<T> want;
  for (T v : x) {
    T bits = 0;
    for (U u = static_cast<U>(v); u != 0; u = static_cast<U>(u >> 1)) bits += u & 1;
    want.push_back(bits);
  }
  EXPECT_EQ(Values<T>(out[0]), want) << DTypeName(dtype);
}

// count_leading_zeros (lax.clz): the zero bits above the highest set bit,
// the type's width for 0, on every integer type; floats and i1 are refused.
template <typename T>
void CheckClz(DType dtype) {
  using U = std::make_unsigned_t<T>;
  std::vector<T> x = {
      0, 1, T(-1), std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), T(0x55)};
  for (int i = 0; i < 60; ++i) x.push_back(static_cast<T>(Rng()() >> (Rng()() % 64)));
  auto out = MustRunOp(
      {"count_leading_zeros", {Raw(dtype, x)}, {{dtype, {static_cast<int64_t>(x.size())}}}});
  std::vector<T> want;
  for (T v : x) {
    T zeros = 0;
    for (int bit = 8 * sizeof(U) - 1; bit >= 0 && !((static_cast<U>(v) >> bit) & 1); --bit) ++zeros;
    want.push_back(zeros);
  }
  EXPECT_EQ(Values<T>(out[0]), want) << DTypeName(dtype);
}

TEST(IntegerOps, ClzCountsLeadingZerosOfEveryIntegerType) {
  CheckClz<int8_t>(DType::kI8);
  CheckClz<uint8_t>(DType::kU8);
  CheckClz<int32_t>(DType::kI32);
  CheckClz<uint32_t>(DType::kU32);
  CheckClz<int64_t>(DType::kI64);
  CheckClz<uint64_t>(DType::kU64);
  for (DType t : {DType::kF32, DType::kI1})
    ExpectError(RunOp({"count_leading_zeros", {HostTensor::FromDouble(t, {2}, {1, 0})}, {{t, {2}}}})
                    .status(),
                {"count_leading_zeros", DTypeName(t)});
}

TEST(IntegerOps, PopcntCountsSetBitsOfEveryIntegerType) {
  CheckPopcnt<int8_t>(DType::kI8);
  CheckPopcnt<uint8_t>(DType::kU8);
  CheckPopcnt<int16_t>(DType::kI16);
  CheckPopcnt<uint16_t>(DType::kU16);
  CheckPopcnt<int32_t>(DType::kI32);
  CheckPopcnt<uint32_t>(DType::kU32);
  CheckPopcnt<int64_t>(DType::kI64);
  CheckPopcnt<uint64_t>(DType::kU64);
  for (DType t : {DType::kF32, DType::kI1})
    ExpectError(RunOp({"popcnt", {HostTensor::FromDouble(t, {2}, {1, 0})}, {{t, {2}}}}).status(),
                {"popcnt", DTypeName(t)});
}

// i16 and u16 operands: every pair of the extremes and values around them,
// then random pairs.
template <typename T>
std::pair<std::vector<T>, std::vector<T>> SixteenBitPairs() {
  constexpr T kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  const std::vector<T> edges = {kLo, T(kLo + 1), kHi,   T(kHi - 1), 0,  1,
                                2,   T(-1),      T(-2), 15,         16, 17};
  std::vector<T> a, b;
  for (T x : edges)
    for (T y : edges) a.push_back(x), b.push_back(y);
  for (int i = 0; i < 300; ++i)
    a.push_back(static_cast<T>(Rng()())), b.push_back(static_cast<T>(Rng()()));
  return {a, b};
}

// v modulo 2^16 as T: the wraparound of i16 and u16 arithmetic.
template <typename T>
T Wrap16(int64_t v) {
  return static_cast<T>(static_cast<uint16_t>(v & 0xFFFF));
}

// Every integer elementwise op on i16 or u16 against references computed in
// int64 and wrapped by hand, with XLA's rules: x / 0 is -1 (all bits set),
// x % 0 is x, min / -1 is min and min % -1 is 0; a shift amount reads as
// unsigned and one of 16 or more shifts everything out.
template <typename T>
void CheckSixteenBit(DType dtype) {
  constexpr bool kSigned = std::is_signed_v<T>;
  constexpr int64_t kLo = std::numeric_limits<T>::min();
  const auto [a, b] = SixteenBitPairs<T>();
  const int64_t n = static_cast<int64_t>(a.size());
  auto bits = [](T v) { return static_cast<int64_t>(static_cast<uint16_t>(v)); };
  auto power = [](int64_t base, int64_t exp) -> int64_t {
    if (exp < 0) return base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0;
    int64_t r = 1;
    for (int64_t k = 0; k < exp && r != 0; ++k) r = (r * base) & 0xFFFF;
    return r;
  };
  const std::pair<const char*, std::function<int64_t(int64_t, int64_t)>> binary[] = {
      {"add", [](int64_t x, int64_t y) { return x + y; }},
      {"subtract", [](int64_t x, int64_t y) { return x - y; }},
      {"multiply", [](int64_t x, int64_t y) { return x * y; }},
      {"divide",
       [](int64_t x, int64_t y) { return y == 0                  ? -1
                                         : (x == kLo && y == -1) ? x
                                                                 : x / y; }},
      {"remainder",
       [](int64_t x, int64_t y) { return y == 0                  ? x
                                         : (x == kLo && y == -1) ? 0
                                                                 : x % y; }},
      {"maximum", [](int64_t x, int64_t y) { return std::max(x, y); }},
      {"minimum", [](int64_t x, int64_t y) { return std::min(x, y); }},
      {"power", power},
      {"and", [](int64_t x, int64_t y) { return x & y; }},
      {"or", [](int64_t x, int64_t y) { return x | y; }},
      {"xor", [](int64_t x, int64_t y) { return x ^ y; }},
  };
  auto run2 = [&](const char* kind, const std::vector<T>& x, const std::vector<T>& y) {
    return Values<T>(MustRunOp({kind, {Raw(dtype, x), Raw(dtype, y)}, {{dtype, {n}}}})[0]);
  };
  for (const auto& [kind, ref] : binary) {
    std::vector<T> want;
    for (int64_t i = 0; i < n; ++i) want.push_back(Wrap16<T>(ref(a[i], b[i])));
    EXPECT_EQ(run2(kind, a, b), want) << kind << " " << DTypeName(dtype);
  }
  std::vector<T> left, logical, arithmetic;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t shift = bits(b[i]), signed_a = static_cast<int16_t>(a[i]);
    left.push_back(shift >= 16 ? T(0) : Wrap16<T>(bits(a[i]) << shift));
    logical.push_back(shift >= 16 ? T(0) : Wrap16<T>(bits(a[i]) >> shift));
    arithmetic.push_back(Wrap16<T>(signed_a >> std::min<int64_t>(shift, 15)));
  }
  EXPECT_EQ(run2("shift_left", a, b), left) << DTypeName(dtype);
  EXPECT_EQ(run2("shift_right_logical", a, b), logical) << DTypeName(dtype);
  EXPECT_EQ(run2("shift_right_arithmetic", a, b), arithmetic) << DTypeName(dtype);

  std::vector<std::pair<const char*, std::function<int64_t(int64_t)>>> unary = {
      {"negate", [](int64_t x) { return -x; }},
      {"not", [](int64_t x) { return ~x; }},
      {"popcnt", [](int64_t x) { return __builtin_popcountll(static_cast<uint16_t>(x)); }},
      {"count_leading_zeros",
       [](int64_t x) {
         int zeros = 0;
         for (int bit = 15; bit >= 0 && !((x >> bit) & 1); --bit) ++zeros;
         return zeros;
       }},
  };
  if constexpr (kSigned) {
    unary.push_back({"abs", [](int64_t x) { return x < 0 ? -x : x; }});
    unary.push_back({"sign", [](int64_t x) { return (x > 0) - (x < 0); }});
  }
  for (const auto& [kind, ref] : unary) {
    std::vector<T> want;
    for (T v : a) want.push_back(Wrap16<T>(ref(v)));
    EXPECT_EQ(Values<T>(MustRunOp({kind, {Raw(dtype, a)}, {{dtype, {n}}}})[0]), want)
        << kind << " " << DTypeName(dtype);
  }

  const std::pair<const char*, std::function<bool(int64_t, int64_t)>> directions[] = {
      {"EQ", std::equal_to<int64_t>()},      {"NE", std::not_equal_to<int64_t>()},
      {"GE", std::greater_equal<int64_t>()}, {"GT", std::greater<int64_t>()},
      {"LE", std::less_equal<int64_t>()},    {"LT", std::less<int64_t>()}};
  for (const auto& [dir, ref] : directions) {
    auto out = MustRunOp({"compare",
                          {Raw(dtype, a), Raw(dtype, b)},
                          {{DType::kI1, {n}}},
                          {{"comparison_direction", std::string(dir)}}});
    std::vector<uint8_t> want;
    for (int64_t i = 0; i < n; ++i) want.push_back(ref(a[i], b[i]) ? 1 : 0);
    EXPECT_EQ(Values<uint8_t>(out[0]), want) << dir << " " << DTypeName(dtype);
  }
  HostTensor predicate = Random(DType::kI1, {n}, Rng(), 0, 1);
  std::vector<T> selected, clamped;
  const T lo = static_cast<T>(kSigned ? -300 : 300), hi = 20000;
  for (int64_t i = 0; i < n; ++i) {
    selected.push_back(predicate.Get(i) ? a[i] : b[i]);
    clamped.push_back(std::min(std::max(a[i], lo), hi));
  }
  EXPECT_EQ(Values<T>(MustRunOp(
                {"select", {predicate, Raw(dtype, a), Raw(dtype, b)}, {{dtype, {n}}}})[0]),
            selected)
      << DTypeName(dtype);
  EXPECT_EQ(Values<T>(MustRunOp(
                {"clamp",
                 {Raw(dtype, std::vector<T>{lo}), Raw(dtype, a), Raw(dtype, std::vector<T>{hi})},
                 {{dtype, {n}}}})[0]),
            clamped)
      << DTypeName(dtype);
}

TEST(SixteenBitIntegers, EveryElementwiseOpWrapsAndDividesAsXla) {
  CheckSixteenBit<int16_t>(DType::kI16);
  CheckSixteenBit<uint16_t>(DType::kU16);
  // abs and sign take signed integers only.
  for (const char* kind : {"abs", "sign"})
    ExpectError(
        RunOp({kind, {Raw(DType::kU16, std::vector<uint16_t>{1})}, {{DType::kU16, {1}}}}).status(),
        {kind, "u16"});
}

// convert to and from i16 and u16: integers wrap modulo 2^16 (as XLA's
// integer converts truncate); floats truncate toward zero and saturate, NaN
// gives 0; every i16 and u16 value is exact in f32.
TEST(SixteenBitIntegers, ConvertWrapsIntegersAndSaturatesFloats) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = INFINITY;
  HostTensor f = HostTensor::FromDouble(
      DType::kF32, {10}, {-1e9, 1e9, 32767.9, -32768.9, 65535.5, -0.5, 7.9, nan, inf, -inf});
  EXPECT_EQ(Values<int16_t>(MustRunOp({"convert", {f}, {{DType::kI16, {10}}}})[0]),
            (std::vector<int16_t>{-32768, 32767, 32767, -32768, 32767, 0, 7, 0, 32767, -32768}));
  EXPECT_EQ(Values<uint16_t>(MustRunOp({"convert", {f}, {{DType::kU16, {10}}}})[0]),
            (std::vector<uint16_t>{0, 65535, 32767, 0, 65535, 0, 7, 0, 65535, 0}));
  HostTensor wide = HostTensor::FromDouble(DType::kI32, {6}, {70000, -70000, 65535, -1, 32768, 5});
  EXPECT_EQ(Values<int16_t>(MustRunOp({"convert", {wide}, {{DType::kI16, {6}}}})[0]),
            (std::vector<int16_t>{4464, -4464, -1, -1, -32768, 5}));
  EXPECT_EQ(Values<uint16_t>(MustRunOp({"convert", {wide}, {{DType::kU16, {6}}}})[0]),
            (std::vector<uint16_t>{4464, 61072, 65535, 65535, 32768, 5}));
  const auto [s, u] = SixteenBitPairs<int16_t>();
  const int64_t n = static_cast<int64_t>(s.size());
  std::vector<uint16_t> as_unsigned;
  std::vector<double> as_double;
  std::vector<int8_t> as_i8;
  for (int16_t v : s) {
    as_unsigned.push_back(static_cast<uint16_t>(v));
    as_double.push_back(v);
    as_i8.push_back(static_cast<int8_t>(static_cast<uint8_t>(v & 0xFF)));
  }
  HostTensor si = Raw(DType::kI16, s);
  EXPECT_EQ(Values<uint16_t>(MustRunOp({"convert", {si}, {{DType::kU16, {n}}}})[0]), as_unsigned);
  EXPECT_EQ(Values<int8_t>(MustRunOp({"convert", {si}, {{DType::kI8, {n}}}})[0]), as_i8);
  for (DType to : {DType::kF32, DType::kI32, DType::kF64, DType::kI64})
    EXPECT_EQ(MustRunOp({"convert", {si}, {{to, {n}}}})[0].ToDouble(), as_double) << DTypeName(to);
  HostTensor ui = Raw(DType::kU16, as_unsigned);
  std::vector<double> unsigned_double(as_unsigned.begin(), as_unsigned.end());
  for (DType to : {DType::kF32, DType::kI32, DType::kU32})
    EXPECT_EQ(MustRunOp({"convert", {ui}, {{to, {n}}}})[0].ToDouble(), unsigned_double)
        << DTypeName(to);
  EXPECT_EQ(Values<int16_t>(MustRunOp({"convert", {ui}, {{DType::kI16, {n}}}})[0]), s);
  std::vector<double> nonzero;
  for (int16_t v : s) nonzero.push_back(v != 0);
  EXPECT_EQ(MustRunOp({"convert", {si}, {{DType::kI1, {n}}}})[0].ToDouble(), nonzero);
}

// A fused program reads integer operands as the numbers they are (i16 sign-
// and u16 zero-extended), into an f32 result.
TEST(SixteenBitIntegers, FusedProgramsLoadThem) {
  const auto [s, u] = SixteenBitPairs<int16_t>();
  const int64_t n = static_cast<int64_t>(s.size());
  std::vector<uint16_t> unsigned_values;
  for (int16_t v : u) unsigned_values.push_back(static_cast<uint16_t>(v));
  auto out = MustRunOp({"brt.fused_elementwise",
                        {Raw(DType::kI16, s), Raw(DType::kU16, unsigned_values)},
                        {{DType::kF32, {n}}},
                        {{"ops", "add"}, {"program", std::vector<int64_t>{0, 1, -1}}}});
  std::vector<double> want;
  for (int64_t i = 0; i < n; ++i) want.push_back(double(s[i]) + double(unsigned_values[i]));
  EXPECT_EQ(out[0].ToDouble(), want);
  // u32 and u64 too (the CUDA interpreter once read their bits as a float's):
  // the sum rounds as an f32 addition of the rounded operands.
  const std::vector<uint32_t> words = {0, 1, 4294967295u, 2147483648u, 16777217u, 123456789u};
  const std::vector<uint64_t> longs = {~uint64_t{0}, 1, 5, uint64_t{1} << 40, 3, 987654321987ull};
  auto wide = MustRunOp({"brt.fused_elementwise",
                         {Raw(DType::kU32, words), Raw(DType::kU64, longs)},
                         {{DType::kF32, {6}}},
                         {{"ops", "add"}, {"program", std::vector<int64_t>{0, 1, -1}}}});
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(wide[0].as<float>()[i], static_cast<float>(words[i]) + static_cast<float>(longs[i]))
        << i;
}

TEST(IntegerOps, SignedShiftsAndXor) {
  HostTensor a = HostTensor::FromDouble(DType::kI32, {6}, {-8, -8, 5, -1, 12, 1});
  HostTensor s = HostTensor::FromDouble(DType::kI32, {6}, {1, 40, 2, 31, -1, 31});
  auto run = [&](const char* kind, const HostTensor& x, const HostTensor& y) {
    return MustRunOp({kind, {x, y}, {{DType::kI32, {6}}}})[0].ToDouble();
  };
  // A negative amount reads as a huge unsigned one: out of range.
  EXPECT_EQ(run("shift_right_arithmetic", a, s), (std::vector<double>{-4, -1, 1, -1, 0, 0}));
  EXPECT_EQ(run("shift_right_logical", a, s), (std::vector<double>{2147483644, 0, 1, 1, 0, 0}));
  EXPECT_EQ(run("shift_left", a, s),
            (std::vector<double>{-16, 0, 20, -2147483648.0, 0, -2147483648.0}));
  EXPECT_EQ(run("xor", a, s), (std::vector<double>{-7, -48, 7, -32, -13, 30}));
  HostTensor p = HostTensor::FromDouble(DType::kI1, {4}, {0, 0, 1, 1});
  HostTensor q = HostTensor::FromDouble(DType::kI1, {4}, {0, 1, 0, 1});
  EXPECT_EQ(MustRunOp({"xor", {p, q}, {{DType::kI1, {4}}}})[0].ToDouble(),
            (std::vector<double>{0, 1, 1, 0}));
  // Shifts take integers only.
  auto r = RunOp({"shift_left",
                  {Random(DType::kF32, {3}, Rng()), Random(DType::kF32, {3}, Rng())},
                  {{DType::kF32, {3}}}});
  ExpectError(r.status(), {"shift_left", "f32"});
}

TEST(Convert, UnsignedSaturatesFromFloat) {
  HostTensor x = HostTensor::FromDouble(DType::kF32, {5}, {-1.0, 3.7, 5e9, 4294967040.0, NAN});
  auto out = MustRunOp({"convert", {x}, {{DType::kU32, {5}}}});
  EXPECT_EQ(Values<uint32_t>(out[0]), (std::vector<uint32_t>{0, 3, 4294967295u, 4294967040u, 0}));
}

// bitcast_convert: the bytes as they are; between widths the narrower side
// has an innermost dimension of the ratio (little-endian, as XLA).
TEST(BitcastConvert, SameBytesAcrossWidths) {
  HostTensor x = Random(DType::kF32, {2, 3}, Rng(), -5, 5);
  auto bits = MustRunOp({"bitcast_convert", {x}, {{DType::kU32, {2, 3}}}});
  EXPECT_EQ(std::memcmp(bits[0].data(), x.data(), 24), 0);
  auto bytes = MustRunOp({"bitcast_convert", {x}, {{DType::kU8, {2, 3, 4}}}});
  EXPECT_EQ(std::memcmp(bytes[0].data(), x.data(), 24), 0);
  uint32_t first;
  std::memcpy(&first, x.data(), 4);
  EXPECT_EQ(bytes[0].as<uint8_t>()[0], first & 0xFF);  // the low byte comes first
  auto back = MustRunOp({"bitcast_convert", {bytes[0]}, {{DType::kF32, {2, 3}}}});
  EXPECT_EQ(back[0].ToDouble(), x.ToDouble());
  HostTensor pairs = HostTensor::FromDouble(DType::kF32, {3, 2}, {1, 2, 3, 4, 5, 6});
  auto wide = MustRunOp({"bitcast_convert", {pairs}, {{DType::kF64, {3}}}});
  EXPECT_EQ(std::memcmp(wide[0].data(), pairs.data(), 24), 0);
  auto r =
      RunOp({"bitcast_convert", {Random(DType::kU8, {2, 3}, Rng(), 0, 9)}, {{DType::kU32, {2}}}});
  ExpectError(r.status(), {"bitcast_convert", "u8", "innermost dimension of 4", "[2,3]"});
  r = RunOp({"bitcast_convert", {Random(DType::kF32, {4}, Rng())}, {{DType::kI32, {2, 2}}}});
  ExpectError(r.status(), {"gives [4], not the result [2,2]"});
}

TEST(Convert, RoundsToNearestEvenInHalfAndBfloat16) {
  // 1 + 2^-11 is halfway between two f16 values: ties go to the even one (1.0).
  // 1 + 3*2^-11 rounds up to 1 + 2^-9.
  HostTensor x = HostTensor::FromDouble(
      DType::kF32, {3}, {1 + std::ldexp(1, -11), 1 + 3 * std::ldexp(1, -11), 65520});
  EXPECT_EQ(MustRunOp({"convert", {x}, {{DType::kF16, {3}}}})[0].ToDouble(),
            (std::vector<double>{1.0, 1 + std::ldexp(1, -9), INFINITY}));
  HostTensor y =
      HostTensor::FromDouble(DType::kF32, {2}, {1 + std::ldexp(1, -8), 1 + 3 * std::ldexp(1, -8)});
  EXPECT_EQ(MustRunOp({"convert", {y}, {{DType::kBF16, {2}}}})[0].ToDouble(),
            (std::vector<double>{1.0, 1 + std::ldexp(1, -6)}));
  HostTensor r = Random(DType::kF32, {100}, Rng(), -100, 100);
  auto back = MustRunOp({"convert",
                         {MustRunOp({"convert", {r}, {{DType::kF16, {100}}}})[0]},
                         {{DType::kF32, {100}}}});
  EXPECT_LE(RelError(back[0].ToDouble(), r.ToDouble()), 1e-3);
}

TEST(FusedElementwise, ProgramWithBroadcastAndConstants) {
  // out = tanh(a * b + c) * 0.5 + select(a > 0, a, 2)
  HostTensor a = Random(DType::kF32, {3, 300}, Rng(), -2, 2);
  HostTensor b = Random(DType::kF32, {300}, Rng(), -2, 2);
  HostTensor c = Random(DType::kF32, {3, 1}, Rng(), -2, 2);
  // registers: 0 a, 1 b, 2 c, 3 const 0.5, 4 const 0, 5 const 2
  std::string ops = "multiply,add,tanh,multiply,compare_GT,select,add";
  std::vector<int64_t> program = {0,  1, -1, 6,  2,  -1, 7, -1, -1, 8, 3,
                                  -1, 0, 4,  -1, 10, 0,  5, 9,  11, -1};
  auto out = MustRunOp(
      {"brt.fused_elementwise",
       {a, b, c},
       {{DType::kF32, {3, 300}}},
       {{"ops", ops}, {"program", program}, {"constants", std::vector<double>{0.5, 0, 2}}}});
  std::vector<double> ref;
  for (int64_t i = 0; i < 900; ++i) {
    const double av = a.Get(i), bv = b.Get(i % 300), cv = c.Get(i / 300);
    ref.push_back(std::tanh(av * bv + cv) * 0.5 + (av > 0 ? av : 2));
  }
  EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6);
}

TEST(FusedElementwise, ShortRowsWithBroadcastOperandsAndHalfTypes) {
  // out = exp(x - m) * w + h on rows of 24 (a softmax-like broadcast of the
  // row max m), in f32, with an f16 operand h and an f16 result: rows are
  // gathered into blocks, and 35 rows do not fill the last one.
  HostTensor x = Random(DType::kF32, {5, 7, 24}, Rng(), -3, 3);
  HostTensor m = Random(DType::kF32, {5, 7, 1}, Rng(), -1, 1);
  HostTensor w = Random(DType::kF32, {24}, Rng(), -2, 2);
  HostTensor h = Random(DType::kF16, {5, 1, 24}, Rng(), -2, 2);
  for (DType result : {DType::kF32, DType::kF16}) {
    auto out =
        MustRunOp({"brt.fused_elementwise",
                   {x, m, w, h},
                   {{result, {5, 7, 24}}},
                   {{"ops", "subtract,exponential,multiply,add"},
                    {"program", std::vector<int64_t>{0, 1, -1, 4, -1, -1, 5, 2, -1, 6, 3, -1}}}});
    std::vector<double> ref;
    for (int64_t i = 0; i < 5 * 7 * 24; ++i) {
      const int64_t row = i / 24, col = i % 24, batch = row / 7;
      ref.push_back(std::exp(x.Get(i) - m.Get(row)) * w.Get(col) + h.Get(batch * 24 + col));
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), result == DType::kF32 ? 1e-6 : 1e-3)
        << DTypeName(result);
  }
}

// Past 2^18 elements x instructions a fused op is split over the threads:
// by blocks of one row, by long rows, and by groups of short rows.
TEST(FusedElementwise, LargeProgramsSplitOverThreadsAsTheyRunAlone) {
  struct Case {
    std::vector<int64_t> out, a, b;
  };
  const Case cases[] = {{{300001}, {300001}, {300001}},           // one row
                        {{300, 1001}, {300, 1001}, {1001}},       // long rows, b broadcast
                        {{20000, 16}, {20000, 16}, {20000, 1}}};  // short rows, b per row
  for (const Case& c : cases) {
    HostTensor a = Random(DType::kF32, c.a, Rng(), -3, 3);
    HostTensor b = Random(DType::kF32, c.b, Rng(), -1, 1);
    // out = tanh(exp(a - b) * 0.5)
    auto out =
        MustRunOp({"brt.fused_elementwise",
                   {a, b},
                   {{DType::kF32, Dims(c.out)}},
                   {{"ops", "subtract,exponential,multiply,tanh"},
                    {"program", std::vector<int64_t>{0, 1, -1, 3, -1, -1, 4, 2, -1, 5, -1, -1}},
                    {"constants", std::vector<double>{0.5}}}});
    const int64_t inner = c.out.back(), n = a.numel();
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i) {
      const double bv = b.numel() == n    ? b.Get(i)
                        : c.b.back() == 1 ? b.Get(i / inner)
                                          : b.Get(i % inner);
      ref[i] = std::tanh(std::exp(a.Get(i) - bv) * 0.5);
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6) << FormatShape(c.out);
  }
}

// 242 instructions in SSA registers, as the bridge writes a written-out
// special function: the providers run them in the few registers live at once
// (the CUDA interpreter holds 96), and a value read only at the end survives.
TEST(FusedElementwise, LongProgramsRunInTheirLiveRegisters) {
  HostTensor x = Random(DType::kF32, {2, 150}, Rng(), -1, 1);
  const std::vector<double> constants = {0.5, -0.25, 0.75};
  std::string ops = "multiply";               // r4 = x * x, read last
  std::vector<int64_t> program = {0, 0, -1};  // registers: x, 3 constants, then r4...
  int64_t p = 1, next = 5;                    // p = 0.5 first
  for (int step = 0; step < 80; ++step) {     // p = tanh(p * x + c[step % 3])
    ops += ",multiply,add,tanh";
    program.insert(program.end(), {p, 0, -1, next, 1 + step % 3, -1, next + 1, -1, -1});
    p = next + 2;
    next += 3;
  }
  ops += ",add";
  program.insert(program.end(), {p, 4, -1});
  auto out = MustRunOp({"brt.fused_elementwise",
                        {x},
                        {{DType::kF32, {2, 150}}},
                        {{"ops", ops}, {"program", program}, {"constants", constants}}});
  std::vector<double> ref;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double xv = x.Get(i);
    double pv = 0.5;
    for (int step = 0; step < 80; ++step) pv = std::tanh(pv * xv + constants[step % 3]);
    ref.push_back(pv + xv * xv);
  }
  EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-5);
}

// A sum of n [3, 5] inputs as one fused program.
Expected<std::vector<HostTensor>> RunFusedSum(const std::vector<HostTensor>& in) {
  std::string ops = "add";
  std::vector<int64_t> program = {0, 1, -1};
  const int64_t n = static_cast<int64_t>(in.size());
  for (int64_t i = 2; i < n; ++i) {
    ops += ",add";
    program.insert(program.end(), {n + i - 2, i, -1});
  }
  return RunOp(
      {"brt.fused_elementwise", in, {{DType::kF32, {3, 5}}}, {{"ops", ops}, {"program", program}}});
}

// 8 inputs, the most brt-compile fuses (docs/ops.md), run on every
// provider; past what a provider holds (the CUDA interpreter 8, the CPU's
// 16) the op is refused at load, naming the limit, rather than read past
// its operand tables.
TEST(FusedElementwise, InputsUpToTheLimitRunAndMoreAreRefused) {
  std::vector<HostTensor> in;
  for (int i = 0; i < 8; ++i) in.push_back(Random(DType::kF32, {3, 5}, Rng(), -1, 1));
  auto out = RunFusedSum(in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<double> ref(15, 0.0);
  for (const HostTensor& t : in)
    for (int64_t e = 0; e < 15; ++e) ref[e] += t.Get(e);
  EXPECT_LE(RelError((*out)[0].ToDouble(), ref), 1e-6);
  while (in.size() < 17) in.push_back(Random(DType::kF32, {3, 5}, Rng(), -1, 1));
  if (TestDevice().kind == DeviceKind::kCuda)
    ExpectError(RunFusedSum(in).status(), {"exceeds the CUDA interpreter's limits"});
  else
    ExpectError(RunFusedSum(in).status(), {"17 operands; at most 16"});
}

TEST(FusedElementwise, BadProgramsAreRejected) {
  HostTensor a = Random(DType::kF32, {4}, Rng());
  ExpectError(RunOp({"brt.fused_elementwise",
                     {a},
                     {{DType::kF32, {4}}},
                     {{"ops", "add"}, {"program", std::vector<int64_t>{0, 5, -1}}}})
                  .status(),
              {"reads register 5"});
  ExpectError(RunOp({"brt.fused_elementwise",
                     {a},
                     {{DType::kF32, {4}}},
                     {{"ops", "frobnicate"}, {"program", std::vector<int64_t>{0, -1, -1}}}})
                  .status(),
              {"unknown op 'frobnicate'"});
}

}  // namespace
}  // namespace brt::test

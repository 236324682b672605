// The CPU provider's f32 exp, log, tanh, logistic and erf (providers/cpu/
// vector_math.h) against float64 libm: error in ulps over a sweep of every
// 997th float bit pattern (both signs, subnormals to infinities), and the
// special values exactly. Over all 2^32 inputs (checked once, too slow for
// every run) the worst errors are exp 0.990, log 0.829, tanh 1.330 and
// logistic 2.402 ulp. erf is XLA's approximation: 6.9 ulp at worst (7.5 with fused multiply-adds)
// (absolute 4.1e-7, near |x| = 3.3).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "cpu/vector_math.h"

namespace brt::cpu::vmath {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// |got - want| in units of the float spacing at want (the subnormal spacing
// below the normal range); inf when one is infinite or NaN and the other not.
double UlpError(float got, double want) {
  const float w = static_cast<float>(want);
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(w) || std::isinf(got)) return got == w ? 0 : INFINITY;
  const double subnormal_spacing = std::ldexp(1.0, -149);
  const double spacing = want == 0
                             ? subnormal_spacing
                             : std::max(std::ldexp(1.0, std::ilogb(want) - 23), subnormal_spacing);
  return std::fabs(static_cast<double>(got) - want) / spacing;
}

struct Sweep {
  double worst = 0;
  float at = 0;
};

template <typename F, typename R>
Sweep MaxUlpError(F f, R ref) {
  Sweep s;
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) {
    const float x = std::bit_cast<float>(static_cast<uint32_t>(bits));
    if (std::isnan(x)) continue;
    const double e = UlpError(f(x), ref(static_cast<double>(x)));
    if (e > s.worst) s = {e, x};
  }
  std::printf("worst error %.3f ulp at x = %.9g\n", s.worst, s.at);
  return s;
}

// Softmax's exp of x <= 0: within one ulp down to -87, zero below; NaN
// stays NaN, 0 gives 1 and -inf 0.
TEST(VectorMath, ExpNonPositive) {
  double worst = 0;
  for (uint32_t bits = 0x80000000u; bits <= 0xc2ae0000u; bits += 97) {  // -0 to -87
    const float x = std::bit_cast<float>(bits);
    worst = std::max(worst, UlpError(ExpNonPositive(x), std::exp(static_cast<double>(x))));
  }
  EXPECT_LE(worst, 1.0);
  EXPECT_EQ(ExpNonPositive(-87.5f), 0.0f);
  EXPECT_EQ(ExpNonPositive(-kInf), 0.0f);
  EXPECT_EQ(ExpNonPositive(0.0f), 1.0f);
  EXPECT_EQ(ExpNonPositive(-0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(ExpNonPositive(kNaN)));
}

TEST(VectorMath, ExpWithinOneUlp) {
  const Sweep s = MaxUlpError(Exp, [](double x) { return std::exp(x); });
  EXPECT_LE(s.worst, 1.0) << "at x = " << s.at;
}

TEST(VectorMath, LogWithinOneUlp) {
  const Sweep s = MaxUlpError(Log, [](double x) { return std::log(x); });
  EXPECT_LE(s.worst, 1.0) << "at x = " << s.at;
}

TEST(VectorMath, TanhWithinOneAndAHalfUlps) {
  const Sweep s = MaxUlpError(Tanh, [](double x) { return std::tanh(x); });
  EXPECT_LE(s.worst, 1.5) << "at x = " << s.at;
}

TEST(VectorMath, LogisticWithinTwoAndAHalfUlps) {
  const Sweep s = MaxUlpError(Logistic, [](double x) { return 1 / (1 + std::exp(-x)); });
  EXPECT_LE(s.worst, 2.5) << "at x = " << s.at;
}

TEST(VectorMath, ErfWithinEightUlps) {
  const Sweep s = MaxUlpError(Erf, [](double x) { return std::erf(x); });
  EXPECT_LE(s.worst, 8.0) << "at x = " << s.at;
}

TEST(VectorMath, SpecialValuesAsLibm) {
  EXPECT_TRUE(std::isnan(Exp(kNaN)));
  EXPECT_EQ(Exp(kInf), kInf);
  EXPECT_EQ(Exp(-kInf), 0.0f);
  EXPECT_EQ(Exp(0.0f), 1.0f);
  EXPECT_EQ(Exp(88.8f), kInf);               // past FLT_MAX
  EXPECT_EQ(Exp(88.72f), std::exp(88.72f));  // just below it
  EXPECT_EQ(Exp(-104.5f), 0.0f);             // below half the smallest subnormal
  EXPECT_EQ(Exp(-103.5f), std::numeric_limits<float>::denorm_min());  // above it
  EXPECT_GT(Exp(-100.0f), 0.0f);                                      // a subnormal
  EXPECT_LE(UlpError(Exp(-100.0f), std::exp(-100.0)), 1.0);           // rounded once

  EXPECT_TRUE(std::isnan(Log(kNaN)));
  EXPECT_TRUE(std::isnan(Log(-1.0f)));
  EXPECT_TRUE(std::isnan(Log(-kInf)));
  EXPECT_EQ(Log(0.0f), -kInf);
  EXPECT_EQ(Log(-0.0f), -kInf);
  EXPECT_EQ(Log(kInf), kInf);
  EXPECT_EQ(Log(1.0f), 0.0f);
  const float min_subnormal = std::numeric_limits<float>::denorm_min();
  EXPECT_LE(UlpError(Log(min_subnormal), std::log(double{min_subnormal})), 1.0);

  EXPECT_TRUE(std::isnan(Tanh(kNaN)));
  EXPECT_EQ(Tanh(kInf), 1.0f);
  EXPECT_EQ(Tanh(-kInf), -1.0f);
  EXPECT_EQ(Tanh(20.0f), 1.0f);
  EXPECT_EQ(Tanh(1e-30f), 1e-30f);
  EXPECT_TRUE(std::signbit(Tanh(-0.0f)));

  EXPECT_TRUE(std::isnan(Logistic(kNaN)));
  EXPECT_EQ(Logistic(kInf), 1.0f);
  EXPECT_EQ(Logistic(-kInf), 0.0f);
  EXPECT_EQ(Logistic(0.0f), 0.5f);

  EXPECT_TRUE(std::isnan(Erf(kNaN)));
  EXPECT_EQ(Erf(kInf), 1.0f);
  EXPECT_EQ(Erf(-kInf), -1.0f);
  EXPECT_EQ(Erf(-0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(Erf(-0.0f)));
}

}  // namespace
}  // namespace brt::cpu::vmath

// reduce_precision against hand-computed cases (rounding ties, overflow to
// inf, flushed denormals, NaN) and against the hardware's f32 -> f16
// conversion on random values of f16's normal range.
#include <bit>
#include <cmath>
#include <limits>

#include "test_util.h"

namespace brt::test {
namespace {

std::vector<float> RunReducePrecision(const std::vector<float>& x, int64_t exponent_bits,
                                      int64_t mantissa_bits) {
  const int64_t n = static_cast<int64_t>(x.size());
  HostTensor in(DType::kF32, {n});
  std::copy(x.begin(), x.end(), in.as<float>());
  auto out = MustRunOp({"reduce_precision",
                        {in},
                        {{DType::kF32, {n}}},
                        {{"exponent_bits", exponent_bits}, {"mantissa_bits", mantissa_bits}}});
  return std::vector<float>(out[0].as<float>(), out[0].as<float>() + x.size());
}

void ExpectSameBits(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(got[i]), std::bit_cast<uint32_t>(want[i]))
        << "element " << i << ": got " << got[i] << ", want " << want[i];
}

TEST(ReducePrecision, HandComputedCases) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // bf16's widths: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 (odd): even wins;
  // 1 + 3 * 2^-8 ties between 1 + 2^-7 (odd) and 1 + 2^-6 (even); 3e38 lies
  // between 225 and 226 * 2^120, nearer the second.
  ExpectSameBits(RunReducePrecision({1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -2.5f, 3e38f}, 8, 7),
                 {1.0f, 1.0f + 0x1p-6f, -2.5f, 0x1.c4p+127f});
  // f16's widths: 65520 rounds up to 2^16, past f16's largest (65504): inf;
  // 1e-5 lies below f16's smallest normal (2^-14): a zero of its sign.
  ExpectSameBits(RunReducePrecision({65504.0f, 65520.0f, -65520.0f, 1e-5f, -1e-5f, -inf}, 5, 10),
                 {65504.0f, inf, -inf, 0.0f, -0.0f, -inf});
  // A NaN comes back as it is, payload and all, even with no mantissa bits
  // left; with none, 3 ties between 2 (biased exponent 128, even) and 4
  // (129): 2.
  const float payload = std::bit_cast<float>(0xffc01234u);
  ExpectSameBits(RunReducePrecision({payload, nan}, 5, 10), {payload, nan});
  ExpectSameBits(RunReducePrecision({payload, 3.0f}, 8, 0), {payload, 2.0f});
  // Widths at or above f32's own change nothing.
  ExpectSameBits(RunReducePrecision({0.1f, -7e-40f}, 11, 52), {0.1f, -7e-40f});
}

TEST(ReducePrecision, MatchesTheHardwareHalfConversionOnNormalValues) {
  std::uniform_real_distribution<float> exponent(-14.0f, 15.9f);
  std::vector<float> x(4099), want(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = std::exp2(exponent(Rng())) * (Rng()() % 2 ? 1.0f : -1.0f);
    want[i] = static_cast<float>(static_cast<_Float16>(x[i]));
  }
  ExpectSameBits(RunReducePrecision(x, 5, 10), want);
}

TEST(ReducePrecision, BadAttributesAndTypesAreNamed) {
  HostTensor x = Random(DType::kF32, {4}, Rng());
  ExpectError(RunOp({"reduce_precision",
                     {x},
                     {{DType::kF32, {4}}},
                     {{"exponent_bits", int64_t{0}}, {"mantissa_bits", int64_t{3}}}})
                  .status(),
              {"reduce_precision", "exponent_bits must be >= 1"});
  ExpectError(
      RunOp({"reduce_precision", {x}, {{DType::kF32, {4}}}, {{"exponent_bits", int64_t{5}}}})
          .status(),
      {"reduce_precision", "missing required attribute 'mantissa_bits'"});
  HostTensor i = Random(DType::kI32, {4}, Rng(), -9, 9);
  ExpectError(RunOp({"reduce_precision",
                     {i},
                     {{DType::kI32, {4}}},
                     {{"exponent_bits", int64_t{5}}, {"mantissa_bits", int64_t{3}}}})
                  .status(),
              {"reduce_precision", "i32"});
}

}  // namespace
}  // namespace brt::test

// The ops only the CPU provider runs (placed on the CPU under --target=cuda
// too), so these tests have no CUDA variant: reduce_precision against
// hand-computed cases (rounding ties, overflow to inf, flushed denormals, NaN)
// and against the hardware's f32 -> f16 conversion on random values of f16's
// normal range; brt.check_indices, which brt-compile makes for --target=cpu.
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

// brt.check_indices passes its indices (of any integer type) through when
// each component is within its bound, and fails the run at the first one that
// is not, naming it, where it is, the range of valid indices and `what`.
TEST(CheckIndices, PassesIndicesInRangeAndRefusesTheRest) {
  for (DType dtype : {DType::kI32, DType::kI64, DType::kI8, DType::kU8, DType::kU32, DType::kU64}) {
    const std::vector<double> values = {0, 1, 4, 0, 2, 1};  // (row, column) pairs, bounds 5 and 2
    HostTensor in_range = HostTensor::FromDouble(dtype, {3, 2}, values);
    const std::vector<Attribute> attrs = {{"bounds", std::vector<int64_t>{5, 2}},
                                          {"what", std::string("gather at model.py:7")}};
    auto out = MustRunOp({"brt.check_indices", {in_range}, {{dtype, {3, 2}}}, attrs});
    EXPECT_EQ(out[0].ToDouble(), values);
    // Below 0 a signed index; an unsigned one at its type's largest value.
    std::string low = "-1";
    HostTensor low_bad = in_range;
    if (dtype == DType::kU8) low = "255", low_bad.as<uint8_t>()[0] = 255;
    if (dtype == DType::kU32) low = "4294967295", low_bad.as<uint32_t>()[0] = 0xffffffffu;
    if (dtype == DType::kU64) low = "18446744073709551615", low_bad.as<uint64_t>()[0] = ~0ull;
    if (low == "-1") low_bad.Set(0, -1);
    for (auto [at, value, where] :
         {std::tuple{3, std::string("2"), "[1, 1]"}, std::tuple{4, std::string("5"), "[2, 0]"},
          std::tuple{0, low, "[0, 0]"}}) {
      HostTensor bad = at == 0 ? low_bad : in_range;
      if (at != 0) bad.Set(at, std::stod(value));
      auto r = RunOp({"brt.check_indices", {bad}, {{dtype, {3, 2}}}, attrs});
      ASSERT_FALSE(r.ok()) << "index " << value << " at " << where << " " << DTypeName(dtype);
      ExpectError(r.status(),
                  {"index " + value + " (at " + where,
                   "not in [0, " + std::string(at % 2 ? "2" : "5") + "): gather at model.py:7"});
    }
  }
  auto one_bound = RunOp({"brt.check_indices",
                          {HostTensor::FromDouble(DType::kI32, {4}, {0, 3, 2, 9})},
                          {{DType::kI32, {4}}},
                          {{"bounds", std::vector<int64_t>{9}}, {"what", std::string("scatter")}}});
  ASSERT_FALSE(one_bound.ok());
  ExpectError(one_bound.status(), {"index 9 (at [3] of the indices) is not in [0, 9): scatter"});
}

// cholesky, triangular_solve and lu (LAPACK's potrf, BLAS's trsm, LAPACK's
// getrf) against factors and solutions worked by hand, batched, in every float dtype (f16
// and bf16 through f32; the numbers are exact in each); a matrix that is not
// positive definite gives NaN in the factor's triangle.
TEST(Linalg, CholeskyAndTriangularSolveMatchHandReferences) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType dtype : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16}) {
    // [[4, 2], [2, 5]] = L L^T with L = [[2, 0], [1, 2]]; [[1, 2], [2, 1]] is indefinite.
    HostTensor a = HostTensor::FromDouble(dtype, {2, 2, 2}, {4, 2, 2, 5, 1, 2, 2, 1});
    auto lower = MustRunOp({"cholesky", {a}, {{dtype, {2, 2, 2}}}, {{"lower", int64_t{1}}}});
    auto upper = MustRunOp({"cholesky", {a}, {{dtype, {2, 2, 2}}}, {{"lower", int64_t{0}}}});
    const std::vector<double> l = lower[0].ToDouble(), u = upper[0].ToDouble();
    const std::vector<double> want_l = {2, 0, 1, 2, nan, 0, nan, nan};
    const std::vector<double> want_u = {2, 1, 0, 2, nan, nan, 0, nan};
    for (size_t i = 0; i < want_l.size(); ++i) {
      EXPECT_TRUE(std::isnan(want_l[i]) ? std::isnan(l[i]) : l[i] == want_l[i])
          << DTypeName(dtype) << " lower " << i << ": " << l[i];
      EXPECT_TRUE(std::isnan(want_u[i]) ? std::isnan(u[i]) : u[i] == want_u[i])
          << DTypeName(dtype) << " upper " << i << ": " << u[i];
    }
    // t = [[2, 0], [1, 4]] (lower; 7 above the diagonal is not read).
    HostTensor t = HostTensor::FromDouble(dtype, {2, 2}, {2, 7, 1, 4});
    auto solve = [&](std::vector<double> b, bool left, std::string transpose) {
      const std::vector<int64_t> dims =
          left ? std::vector<int64_t>{2, 1} : std::vector<int64_t>{1, 2};
      const TensorType type{dtype, {dims[0], dims[1]}};
      OpRun run{"triangular_solve",
                {t, HostTensor::FromDouble(dtype, dims, b)},
                {type},
                {{"left_side", int64_t{left}},
                 {"lower", int64_t{1}},
                 {"unit_diagonal", int64_t{0}},
                 {"transpose_a", transpose}}};
      return MustRunOp(run)[0].ToDouble();
    };
    // t x = [2, 9]: x = [1, 2]; t^T x = [4, 8]: x = [1, 2]; x t = [4, 8]: x = [1, 2].
    EXPECT_EQ(solve({2, 9}, true, "NO_TRANSPOSE"), (std::vector<double>{1, 2})) << DTypeName(dtype);
    EXPECT_EQ(solve({4, 8}, true, "TRANSPOSE"), (std::vector<double>{1, 2})) << DTypeName(dtype);
    EXPECT_EQ(solve({4, 8}, false, "NO_TRANSPOSE"), (std::vector<double>{1, 2}))
        << DTypeName(dtype);
    EXPECT_EQ(solve({2, 9}, false, "ADJOINT"), (std::vector<double>{1, 2})) << DTypeName(dtype);
    // [[2, 1], [4, 4]]: rows swapped, L = [[1, 0], [0.5, 1]], U = [[4, 4], [0, -1]];
    // [[0, 1], [0, 3]] has an exact zero pivot, after which getrf goes on.
    auto lu = MustRunOp({"lu",
                         {HostTensor::FromDouble(dtype, {2, 2, 2}, {2, 1, 4, 4, 0, 1, 0, 3})},
                         {{dtype, {2, 2, 2}}, {DType::kI32, {2, 2}}}});
    EXPECT_EQ(lu[0].ToDouble(), (std::vector<double>{4, 4, 0.5, -1, 0, 1, 0, 3}))
        << DTypeName(dtype);
    EXPECT_EQ(lu[1].ToDouble(), (std::vector<double>{2, 2, 1, 2})) << DTypeName(dtype);
  }
  HostTensor rect = Random(DType::kF32, {2, 3}, Rng());
  ExpectError(RunOp({"cholesky", {rect}, {{DType::kF32, {2, 3}}}, {}}).status(),
              {"cholesky", "not a batch of square matrices"});
  HostTensor square = Random(DType::kF32, {3, 3}, Rng());
  ExpectError(RunOp({"triangular_solve",
                     {square, rect},
                     {{DType::kF32, {2, 3}}},
                     {{"left_side", int64_t{1}},
                      {"lower", int64_t{1}},
                      {"unit_diagonal", int64_t{0}},
                      {"transpose_a", std::string("NO_TRANSPOSE")}}})
                  .status(),
              {"triangular_solve", "matching b [2,3]'s rows"});
}

}  // namespace
}  // namespace brt::test

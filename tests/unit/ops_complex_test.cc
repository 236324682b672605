// c64 and c128 against std::complex<long double> references: every
// elementwise op whose registry domain takes complex values, with
// broadcasting, compare/select/convert and the 16-byte data movement, on
// the CPU provider and the CUDA provider's own kernels (the _cuda_emulated
// run), and the complex-only ops (real, imag, complex, abs). fft,
// reductions, scatter and dot: ops_complex_fft_test.cc.
#include <complex>
#include <functional>
#include <string_view>

#include "complex_test_util.h"

namespace brt::test {
namespace {

double Tolerance(DType t) { return t == DType::kC64 ? 2e-6 : 1e-13; }

struct UnaryCase {
  const char* kind;
  std::function<Z(Z)> ref;
  double scale;  // inputs' parts in [-scale, scale]
};

const UnaryCase kUnary[] = {
    {"negate", [](Z z) { return -z; }, 3},
    {"exponential", [](Z z) { return std::exp(z); }, 3},
    {"exponential_minus_one", [](Z z) { return std::exp(z) - Z(1); }, 2},
    {"log", [](Z z) { return std::log(z); }, 3},
    {"log_plus_one", [](Z z) { return std::log(Z(1) + z); }, 2},
    {"sqrt", [](Z z) { return std::sqrt(z); }, 3},
    {"rsqrt", [](Z z) { return Z(1) / std::sqrt(z); }, 3},
    {"cbrt", [](Z z) { return std::exp(std::log(z) / Z(3)); }, 3},
    {"tanh", [](Z z) { return std::tanh(z); }, 2},
    {"logistic", [](Z z) { return Z(1) / (Z(1) + std::exp(-z)); }, 2},
    {"sine", [](Z z) { return std::sin(z); }, 2},
    {"cosine", [](Z z) { return std::cos(z); }, 2},
    {"tan", [](Z z) { return std::tan(z); }, 1},
    {"sign", [](Z z) { return z / std::abs(z); }, 3},
    {"sinh", [](Z z) { return std::sinh(z); }, 2},
    {"cosh", [](Z z) { return std::cosh(z); }, 2},
    {"asin", [](Z z) { return std::asin(z); }, 2},
    {"acos", [](Z z) { return std::acos(z); }, 2},
    {"atan", [](Z z) { return std::atan(z); }, 2},
    {"asinh", [](Z z) { return std::asinh(z); }, 2},
    {"acosh", [](Z z) { return std::acosh(z); }, 2},
    {"atanh", [](Z z) { return std::atanh(z); }, 2},
};

TEST(ComplexUnary, EveryComplexOpMatchesLongDoubleReference) {
  for (DType t : {DType::kC64, DType::kC128})
    for (const UnaryCase& c : kUnary)
      for (std::vector<int64_t> shape : {std::vector<int64_t>{5, 7}, {}, {0, 3}}) {
        HostTensor x = Random(t, shape, Rng(), -c.scale, c.scale);
        auto out = MustRunOp({c.kind, {x}, {{t, Dims(shape)}}});
        std::vector<Z> want;
        for (int64_t i = 0; i < x.numel(); ++i) want.push_back(c.ref(At(x, i)));
        EXPECT_LE(RelErr(out[0], want), 4 * Tolerance(t)) << c.kind << " " << DTypeName(t);
      }
}

// A registry row whose domain gains complex values gains a case above.
TEST(ComplexUnary, EveryRegistryComplexOpHasACase) {
  auto has_case = [](std::string_view kind) {
    for (const UnaryCase& c : kUnary)
      if (kind == c.kind) return true;
    return false;
  };
#define BRT_UNARY(e, kind, domain, ...)               \
  if (std::string_view(#domain).ends_with("Complex")) \
    EXPECT_TRUE(has_case(kind)) << kind << " takes complex values but has no case";
#include "brt/ops.def"
}

TEST(ComplexBinary, ArithmeticWithBroadcastMatchesReference) {
  using Ref = std::function<Z(Z, Z)>;
  const std::pair<const char*, Ref> cases[] = {
      {"add", [](Z a, Z b) { return a + b; }},
      {"subtract", [](Z a, Z b) { return a - b; }},
      {"multiply", [](Z a, Z b) { return a * b; }},
      {"divide", [](Z a, Z b) { return a / b; }},
      {"power", [](Z a, Z b) { return std::pow(a, b); }},
      {"atan2",
       [](Z a, Z b) {
         const Z i(0, 1);
         return -i * std::log((b + i * a) / std::sqrt(a * a + b * b));
       }},
      {"maximum",
       [](Z a, Z b) {
         return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag()) ? b : a;
       }},
  };
  for (DType t : {DType::kC64, DType::kC128})
    for (const auto& [kind, ref] : cases) {
      HostTensor a = Random(t, {4, 6}, Rng(), -2, 2);
      HostTensor b = Random(t, {1, 6}, Rng(), -2, 2);  // broadcast along rows
      auto out = MustRunOp({kind, {a, b}, {{t, {4, 6}}}});
      std::vector<Z> want;
      for (int64_t i = 0; i < 24; ++i) want.push_back(ref(At(a, i), At(b, i % 6)));
      EXPECT_LE(RelErr(out[0], want), 8 * Tolerance(t)) << kind << " " << DTypeName(t);
    }
}

TEST(ComplexCompareSelect, EqualityAndLexicographicOrder) {
  HostTensor a = Random(DType::kC64, {16}, Rng(), -1, 1);
  HostTensor b = a;
  auto* bz = b.as<std::complex<float>>();
  for (int i = 0; i < 16; i += 3) bz[i] = std::complex<float>(bz[i].real(), bz[i].imag() + 0.5f);
  for (const char* dir : {"EQ", "NE", "LT", "GE"}) {
    auto out =
        MustRunOp({"compare", {a, b}, {{DType::kI1, {16}}}, {{"comparison_direction", dir}}});
    for (int64_t i = 0; i < 16; ++i) {
      const Z x = At(a, i), y = At(b, i);
      const bool less = x.real() < y.real() || (x.real() == y.real() && x.imag() < y.imag());
      const bool want = dir[0] == 'E'   ? x == y
                        : dir[0] == 'N' ? x != y
                        : dir[0] == 'L' ? less
                                        : !less;
      EXPECT_EQ(out[0].as<uint8_t>()[i] != 0, want) << dir << " " << i;
    }
  }
  HostTensor pred = Random(DType::kI1, {16}, Rng(), 0, 1);
  auto chosen = MustRunOp({"select", {pred, a, b}, {{DType::kC64, {16}}}});
  for (int64_t i = 0; i < 16; ++i)
    EXPECT_EQ(At(chosen[0], i), pred.as<uint8_t>()[i] ? At(a, i) : At(b, i)) << i;
}

TEST(ComplexConvert, BetweenComplexRealAndIntegerTypes) {
  HostTensor z = Random(DType::kC128, {9}, Rng(), -50, 50);
  z.as<std::complex<double>>()[0] = {0, 1};  // to i1 false: the imaginary part goes too
  auto narrow = MustRunOp({"convert", {z}, {{DType::kC64, {9}}}});
  auto real = MustRunOp({"convert", {z}, {{DType::kF32, {9}}}});
  auto integer = MustRunOp({"convert", {z}, {{DType::kI32, {9}}}});
  auto truth = MustRunOp({"convert", {z}, {{DType::kI1, {9}}}});
  HostTensor f = Random(DType::kF32, {9}, Rng(), -5, 5);
  auto widened = MustRunOp({"convert", {f}, {{DType::kC128, {9}}}});
  for (int64_t i = 0; i < 9; ++i) {
    const std::complex<double> v = z.as<std::complex<double>>()[i];
    EXPECT_EQ(narrow[0].as<std::complex<float>>()[i], std::complex<float>(v));
    EXPECT_EQ(real[0].as<float>()[i], static_cast<float>(v.real()));  // the imaginary part goes
    EXPECT_EQ(integer[0].as<int32_t>()[i], static_cast<int32_t>(v.real()));
    EXPECT_EQ(truth[0].as<uint8_t>()[i], v.real() != 0.0 ? 1 : 0);
    EXPECT_EQ(widened[0].as<std::complex<double>>()[i], std::complex<double>(f.as<float>()[i]));
  }
}

// c128 elements are 16 bytes: transpose, concatenate, pad and gather move
// them whole.
TEST(ComplexDataMovement, SixteenByteElementsMoveWhole) {
  HostTensor z = Random(DType::kC128, {3, 5}, Rng(), -1, 1);
  auto t = MustRunOp(
      {"transpose", {z}, {{DType::kC128, {5, 3}}}, {{"permutation", std::vector<int64_t>{1, 0}}}});
  auto cat =
      MustRunOp({"concatenate", {z, z}, {{DType::kC128, {3, 10}}}, {{"dimension", int64_t{1}}}});
  HostTensor zero = Random(DType::kC128, {}, Rng(), -1, 1);
  auto padded = MustRunOp({"pad",
                           {z, zero},
                           {{DType::kC128, {5, 5}}},
                           {{"edge_padding_low", std::vector<int64_t>{1, 0}},
                            {"edge_padding_high", std::vector<int64_t>{1, 0}},
                            {"interior_padding", std::vector<int64_t>{0, 0}}}});
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 5; ++c) {
      EXPECT_EQ(At(t[0], c * 3 + r), At(z, r * 5 + c));
      EXPECT_EQ(At(cat[0], r * 10 + c), At(z, r * 5 + c));
      EXPECT_EQ(At(cat[0], r * 10 + 5 + c), At(z, r * 5 + c));
      EXPECT_EQ(At(padded[0], (r + 1) * 5 + c), At(z, r * 5 + c));
    }
  for (int64_t c = 0; c < 5; ++c) EXPECT_EQ(At(padded[0], c), At(zero, 0));
}

TEST(ComplexOnlyOps, RealImagComplexAbs) {
  for (DType t : {DType::kC64, DType::kC128}) {
    const DType part = t == DType::kC64 ? DType::kF32 : DType::kF64;
    HostTensor z = Random(t, {2, 4}, Rng(), -3, 3);
    auto re = MustRunOp({"real", {z}, {{part, {2, 4}}}});
    auto im = MustRunOp({"imag", {z}, {{part, {2, 4}}}});
    auto abs = MustRunOp({"abs", {z}, {{part, {2, 4}}}});
    auto made = MustRunOp({"complex", {re[0], im[0]}, {{t, {2, 4}}}});
    for (int64_t i = 0; i < 8; ++i) {
      EXPECT_EQ(re[0].Get(i), static_cast<double>(At(z, i).real()));
      EXPECT_EQ(im[0].Get(i), static_cast<double>(At(z, i).imag()));
      EXPECT_NEAR(abs[0].Get(i), static_cast<double>(std::abs(At(z, i))), 1e-6);
      EXPECT_EQ(At(made[0], i), At(z, i));
    }
    // Of a real operand (StableHLO takes one): itself, and zeros.
    HostTensor x = Random(part, {2, 4}, Rng(), -3, 3);
    auto re_x = MustRunOp({"real", {x}, {{part, {2, 4}}}});
    auto im_x = MustRunOp({"imag", {x}, {{part, {2, 4}}}});
    for (int64_t i = 0; i < 8; ++i) {
      EXPECT_EQ(re_x[0].Get(i), x.Get(i));
      EXPECT_EQ(im_x[0].Get(i), 0.0);
    }
    // A result of the wrong part type is refused, naming both.
    auto wrong = RunOp({"real", {z}, {{t, {2, 4}}}});
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.status().message().find(DTypeName(part)), std::string::npos)
        << wrong.status().ToString();
  }
}

// The DFT by its definition, in long double: every fft type on 2-D
// transforms of odd and even lengths.
TEST(ComplexFft, EveryTypeMatchesTheDefinition) {
  const long double pi = 3.14159265358979323846264338327950288L;
  const int64_t rows = 3, cols = 6, half = cols / 2 + 1;
  auto dft = [&](const std::vector<Z>& x, bool inverse) {  // 2-D, rows x cols
    std::vector<Z> y(rows * cols);
    const long double sign = inverse ? 1 : -1;
    for (int64_t u = 0; u < rows; ++u)
      for (int64_t v = 0; v < cols; ++v)
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < cols; ++c)
            y[u * cols + v] +=
                x[r * cols + c] *
                std::polar(1.0L, sign * 2 * pi *
                                     (Z::value_type(u * r) / rows + Z::value_type(v * c) / cols));
    if (inverse)
      for (Z& e : y) e /= static_cast<long double>(rows * cols);
    return y;
  };
  const std::vector<int64_t> lengths = {rows, cols};
  HostTensor z = Random(DType::kC128, {2, rows, cols}, Rng(), -1, 1);
  for (const char* type : {"FFT", "IFFT"}) {
    auto out = MustRunOp({"fft",
                          {z},
                          {{DType::kC128, {2, rows, cols}}},
                          {{"fft_type", type}, {"fft_length", lengths}}});
    std::vector<Z> want;
    for (int64_t b = 0; b < 2; ++b) {
      std::vector<Z> x;
      for (int64_t i = 0; i < rows * cols; ++i) x.push_back(At(z, b * rows * cols + i));
      for (const Z& y : dft(x, type[0] == 'I')) want.push_back(y);
    }
    EXPECT_LE(RelErr(out[0], want), 1e-13) << type;
  }
  HostTensor real = Random(DType::kF32, {rows, cols}, Rng(), -1, 1);
  auto spectrum = MustRunOp({"fft",
                             {real},
                             {{DType::kC64, {rows, half}}},
                             {{"fft_type", "RFFT"}, {"fft_length", lengths}}});
  std::vector<Z> x;
  for (int64_t i = 0; i < rows * cols; ++i) x.push_back(Z(real.as<float>()[i]));
  const std::vector<Z> full = dft(x, false);
  std::vector<Z> want;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < half; ++c) want.push_back(full[r * cols + c]);
  EXPECT_LE(RelErr(spectrum[0], want), 1e-6);
  auto back = MustRunOp({"fft",
                         {spectrum[0]},
                         {{DType::kF32, {rows, cols}}},
                         {{"fft_type", "IRFFT"}, {"fft_length", lengths}}});
  for (int64_t i = 0; i < rows * cols; ++i)
    EXPECT_NEAR(back[0].as<float>()[i], real.as<float>()[i], 1e-6) << i;
  auto bad = RunOp({"fft",
                    {real},
                    {{DType::kC64, {rows, cols}}},
                    {{"fft_type", "RFFT"}, {"fft_length", lengths}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("fft_length"), std::string::npos)
      << bad.status().ToString();
}

}  // namespace
}  // namespace brt::test

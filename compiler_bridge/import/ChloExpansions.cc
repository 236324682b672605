#include "import/ChloExpansions.h"

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>

#include "BrtDialect.h"
#include "mlir/IR/BuiltinTypes.h"

namespace brt::bridge {

using mlir::Value;

namespace {

mlir::Type ElementOf(Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getElementType();
}

// Lanczos' approximation of the gamma function with g = 7 and 9 terms, the
// one XLA's lgamma and digamma use.
constexpr double kLanczosG = 7;
constexpr double kLanczosBase = 0.99999999999980993227684700473478;
constexpr std::array<double, 8> kLanczosTerms = {
    676.520368121885098567009190444019, -1259.13921672240287047156078755283,
    771.3234287776530788486528258894,   -176.61502916214059906584551354,
    12.507343278686904814458936853,     -0.13857109526572011689554707,
    9.984369578019570859563e-6,         1.50563273514931155834e-7};

// Float arithmetic on tensors of one float type, with constants of that type.
struct FloatMath {
  Elementwise& e;
  mlir::Type type;

  Value C(double v) { return e.Constant(type, v); }
  Value Add(Value a, Value b) { return e.Op("add", {a, b}, IsScalar(a) ? 1 : 0); }
  Value Sub(Value a, Value b) { return e.Op("subtract", {a, b}, IsScalar(a) ? 1 : 0); }
  Value Mul(Value a, Value b) { return e.Op("multiply", {a, b}, IsScalar(a) ? 1 : 0); }
  Value Div(Value a, Value b) { return e.Op("divide", {a, b}, IsScalar(a) ? 1 : 0); }
  Value Pow(Value a, Value b) { return e.Op("power", {a, b}); }
  Value Rem(Value a, Value b) { return e.Op("remainder", {a, b}); }
  Value Unary(llvm::StringRef kind, Value a) { return e.Op(kind, {a}); }
  Value Is(Value a, llvm::StringRef direction, Value b) { return e.Compare(a, b, direction); }
  Value IsInteger(Value a) { return Is(a, "EQ", Unary("floor", a)); }
  Value And(Value a, Value b) { return e.Op("and", {a, b}); }
  Value Or(Value a, Value b) { return e.Op("or", {a, b}); }
  Value Select(Value p, Value a, Value b) { return e.Select(p, a, b); }

  static bool IsScalar(Value v) {
    return mlir::cast<mlir::RankedTensorType>(v.getType()).getRank() == 0;
  }
};

}  // namespace

Value Elementwise::Constant(mlir::Type element, double value) {
  if (auto complex = mlir::dyn_cast<mlir::ComplexType>(element)) {  // value + 0i
    const auto& semantics =
        mlir::cast<mlir::FloatType>(complex.getElementType()).getFloatSemantics();
    llvm::APFloat real(value), imag(0.0);
    bool lost = false;
    real.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
    imag.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
    auto scalar = mlir::RankedTensorType::get({}, element);
    const std::complex<llvm::APFloat> parts(real, imag);
    return CreateOp(b_, loc_, "constant", mlir::TypeRange{scalar}, mlir::ValueRange{},
                    {b_.getNamedAttr("value", mlir::DenseElementsAttr::get(scalar, {parts}))})
        ->getResult(0);
  }
  return Scalar(b_.getFloatAttr(element, value));
}

Value Elementwise::IntConstant(mlir::Type element, int64_t value) {
  return Scalar(b_.getIntegerAttr(element, value));
}

Value Elementwise::Scalar(mlir::TypedAttr value) {
  auto scalar = mlir::RankedTensorType::get({}, value.getType());
  return CreateOp(b_, loc_, "constant", mlir::TypeRange{scalar}, mlir::ValueRange{},
                  {b_.getNamedAttr("value", mlir::DenseElementsAttr::get(scalar, value))})
      ->getResult(0);
}

Value Elementwise::Op(llvm::StringRef kind, mlir::ValueRange operands, unsigned result_like) {
  auto type = mlir::RankedTensorType::get(shape_, ElementOf(operands[result_like]));
  return CreateOp(b_, loc_, kind, mlir::TypeRange{type}, operands, {})->getResult(0);
}

Value Elementwise::Compare(Value a, Value b, llvm::StringRef direction) {
  auto type = mlir::RankedTensorType::get(shape_, b_.getI1Type());
  return CreateOp(b_, loc_, "compare", mlir::TypeRange{type}, mlir::ValueRange{a, b},
                  {b_.getNamedAttr("comparison_direction", b_.getStringAttr(direction))})
      ->getResult(0);
}

Value Elementwise::Convert(Value v, mlir::Type element, llvm::StringRef kind) {
  auto type = mlir::RankedTensorType::get(shape_, element);
  return CreateOp(b_, loc_, kind, mlir::TypeRange{type}, mlir::ValueRange{v}, {})->getResult(0);
}

// digamma(z + 1) = log(t) + A'(z) / A(z) - g / t with t = z + g + 1/2 and
// A(z) = base + sum_k c_k / (z + k), Lanczos' gamma approximation's parts;
// below 1/2 by reflection: digamma(x) = digamma(1 - x) - pi cot(pi x).
Value ExpandDigamma(Elementwise& e, Value x) {
  FloatMath m{e, ElementOf(x)};
  Value reflect = m.Is(x, "LT", m.C(0.5));
  Value z = m.Select(reflect, m.Unary("negate", x), m.Sub(x, m.C(1)));
  Value a = nullptr, da = nullptr;
  for (size_t k = 0; k < kLanczosTerms.size(); ++k) {
    Value zk = m.Add(z, m.C(k + 1.0));
    Value term = m.Div(m.C(kLanczosTerms[k]), zk);
    Value dterm = m.Div(m.C(kLanczosTerms[k]), m.Mul(zk, zk));
    a = m.Add(a ? a : m.C(kLanczosBase), term);
    da = da ? m.Sub(da, dterm) : m.Unary("negate", dterm);
  }
  // log(t) as log(g + 1/2) + log1p(z / (g + 1/2)): exact where log is not.
  constexpr double kHalfPastG = kLanczosG + 0.5;
  Value t = m.Add(z, m.C(kHalfPastG));
  Value log_t =
      m.Add(m.Unary("log_plus_one", m.Div(z, m.C(kHalfPastG))), m.C(std::log(kHalfPastG)));
  Value digamma = m.Sub(m.Add(log_t, m.Div(da, a)), m.Div(m.C(kLanczosG), t));
  // cot(pi x) from x moved into [-1/2, 1/2], where pi x keeps its precision.
  Value reduced = m.Add(x, m.Unary("abs", m.Unary("floor", m.Add(x, m.C(0.5)))));
  Value pi_reduced = m.Mul(reduced, m.C(std::numbers::pi));
  Value cot = m.Div(m.Unary("cosine", pi_reduced), m.Unary("sine", pi_reduced));
  digamma = m.Select(reflect, m.Sub(digamma, m.Mul(cot, m.C(std::numbers::pi))), digamma);
  // Poles at 0, -1, -2, ...
  Value pole = m.And(m.Is(x, "LE", m.C(0)), m.IsInteger(x));
  return m.Select(pole, m.C(std::numeric_limits<double>::quiet_NaN()), digamma);
}

// Euler-Maclaurin summation (Johansson, "Rigorous high-precision computation
// of the Hurwitz zeta function and its derivatives", formula 5): the first 10
// terms summed, the integral of the rest, and 12 Bernoulli correction terms
// by Horner's rule, as XLA computes it.
Value ExpandZeta(Elementwise& e, Value x, Value q) {
  FloatMath m{e, ElementOf(x)};
  // (2k)! / B_2k, largest k first.
  static constexpr std::array<double, 12> kBernoulliFactors = {
      -7.1661652561756670113e18,
      1.8152105401943546773e17,
      -4.5979787224074726105e15,
      1.1646782814350067249e14,
      -2.950130727918164224e12,
      7.47242496e10,
      -1.8924375803183791606e9,
      47900160.0,
      -1209600.0,
      30240.0,
      -720.0,
      12.0,
  };
  constexpr int kSummed = 10;
  Value minus_x = m.Unary("negate", x);
  Value shifted = q;
  Value sum = m.Pow(q, minus_x);
  for (int k = 1; k < kSummed; ++k) {
    shifted = m.Add(shifted, m.C(1));
    sum = m.Add(sum, m.Pow(shifted, minus_x));
  }
  Value a = m.Add(shifted, m.C(1));  // q + 10
  Value a_pow = m.Pow(a, minus_x);
  Value integral = m.Div(m.Mul(a_pow, a), m.Sub(x, m.C(1)));
  Value inverse_a2 = m.Div(m.C(1), m.Mul(a, a));
  Value horner = nullptr;
  const int terms = static_cast<int>(kBernoulliFactors.size());
  for (int i = 0; i + 1 < terms; ++i) {
    const double offset = 2.0 * (terms - 1 - i);  // x + 22, x + 21 first
    Value rising = m.Mul(m.Add(x, m.C(offset)), m.Add(x, m.C(offset - 1)));
    Value inner = m.C(1 / kBernoulliFactors[i]);
    if (horner) inner = m.Add(horner, inner);
    horner = m.Mul(rising, m.Mul(inverse_a2, inner));
  }
  Value tail = m.Mul(
      a_pow,
      m.Add(m.Mul(m.Div(x, a), m.Add(horner, m.C(1 / kBernoulliFactors[terms - 1]))), m.C(0.5)));
  Value accurate = m.Add(m.Add(sum, integral), tail);
  // Where the rest is below the sum's resolution, the sum alone.
  Value negligible =
      m.Is(m.Unary("abs", a_pow), "LT",
           m.Mul(m.Unary("abs", sum), m.C(std::numeric_limits<double>::denorm_min())));
  Value out = m.Select(negligible, sum, accurate);
  const Value nan = m.C(std::numeric_limits<double>::quiet_NaN());
  const Value inf = m.C(std::numeric_limits<double>::infinity());
  out = m.Select(m.Is(x, "LT", m.C(1)), nan, out);
  // q <= 0 needs an integer x; at integer q <= 0 a pole, +inf for even x.
  Value q_nonpositive = m.Is(q, "LE", m.C(0));
  Value x_integer = m.IsInteger(x);
  out = m.Select(m.And(q_nonpositive, m.Unary("not", x_integer)), nan, out);
  Value x_even = m.And(x_integer, m.Is(m.Rem(x, m.C(2)), "EQ", m.C(0)));
  out = m.Select(m.And(q_nonpositive, m.IsInteger(q)), m.Select(x_even, inf, nan), out);
  // x = 1: the harmonic series.
  return m.Select(m.Is(x, "EQ", m.C(1)), inf, out);
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for n >= 1; digamma at 0.
Value ExpandPolygamma(Elementwise& e, Value n, Value x) {
  FloatMath m{e, ElementOf(x)};
  Value sign = m.Sub(m.Mul(m.Rem(n, m.C(2)), m.C(2)), m.C(1));
  Value n_plus_1 = m.Add(n, m.C(1));
  Value factorial = m.Unary("exponential", m.Unary("lgamma", n_plus_1));
  Value out = m.Mul(m.Mul(sign, factorial), ExpandZeta(e, n_plus_1, x));
  out = m.Select(m.Is(n, "EQ", m.C(0)), ExpandDigamma(e, x), out);
  Value not_natural = m.Or(m.Unary("not", m.IsInteger(n)), m.Is(n, "LT", m.C(0)));
  return m.Select(not_natural, m.C(std::numeric_limits<double>::quiet_NaN()), out);
}

// Cephes' exponentially scaled modified Bessel function of order one: Chebyshev
// series in |x| / 2 - 2 up to 8 and in 32 / |x| - 2 beyond, the f64 tables
// (f32 takes their last 17 and 7 terms, as XLA does).
Value ExpandBesselI1e(Elementwise& e, Value x) {
  FloatMath m{e, ElementOf(x)};
  static constexpr std::array<double, 29> kUpTo8 = {
      2.77791411276104639959E-18,  -2.11142121435816608115E-17, 1.55363195773620046921E-16,
      -1.10559694773538630805E-15, 7.60068429473540693410E-15,  -5.04218550472791168711E-14,
      3.22379336594557470981E-13,  -1.98397439776494371520E-12, 1.17361862988909016308E-11,
      -6.66348972350202774223E-11, 3.62559028155211703701E-10,  -1.88724975172282928790E-9,
      9.38153738649577178388E-9,   -4.44505912879632808065E-8,  2.00329475355213526229E-7,
      -8.56872026469545474066E-7,  3.47025130813767847674E-6,   -1.32731636560394358279E-5,
      4.78156510755005422638E-5,   -1.61760815825896745588E-4,  5.12285956168575772895E-4,
      -1.51357245063125314899E-3,  4.15642294431288815669E-3,   -1.05640848946261981558E-2,
      2.47264490306265168283E-2,   -5.29459812080949914269E-2,  1.02643658689847095384E-1,
      -1.76416518357834055153E-1,  2.52587186443633654823E-1};
  static constexpr std::array<double, 25> kBeyond8 = {
      7.51729631084210481353E-18,  4.41434832307170791151E-18,  -4.65030536848935832153E-17,
      -3.20952592199342395980E-17, 2.96262899764595013876E-16,  3.30820231092092828324E-16,
      -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
      4.27244001671195135429E-14,  -2.10154184277266431302E-14, -4.08355111109219731823E-13,
      -7.19855177624590851209E-13, 2.03562854414708950722E-12,  1.41258074366137813316E-11,
      3.25260358301548823856E-11,  -1.89749581235054123450E-11, -5.58974346219658380687E-10,
      -3.83538038596423702205E-9,  -2.63146884688951950684E-8,  -2.51223623787020892529E-7,
      -3.88256480887769039346E-6,  -1.10588938762623716291E-4,  -9.76109749136146840777E-3,
      7.78576235018280120474E-1};
  const bool f64 = m.type.isF64();
  // Clenshaw's recurrence: b0 = t b1 - b2 + c, the sum (b0 - b2) / 2.
  auto chebyshev = [&](Value t, llvm::ArrayRef<double> terms) {
    Value b0 = nullptr, b1 = nullptr, b2 = nullptr;
    for (double c : terms) {
      b2 = b1;
      b1 = b0;
      Value next = m.C(c);
      if (b1) next = m.Add(m.Mul(t, b1), next);
      if (b2) next = m.Sub(next, b2);
      b0 = next;
    }
    return m.Mul(m.Sub(b0, b2), m.C(0.5));
  };
  Value z = m.Unary("abs", x);
  llvm::ArrayRef<double> up_to_8(kUpTo8), beyond_8(kBeyond8);
  if (!f64) {
    up_to_8 = up_to_8.take_back(17);
    beyond_8 = beyond_8.take_back(7);
  }
  Value near = m.Mul(z, chebyshev(m.Sub(m.Mul(z, m.C(0.5)), m.C(2)), up_to_8));
  Value far = m.Div(chebyshev(m.Sub(m.Div(m.C(32), z), m.C(2)), beyond_8), m.Unary("sqrt", z));
  return m.Mul(m.Unary("sign", x), m.Select(m.Is(z, "LE", m.C(8)), near, far));
}

// On the bits, read as signed integers of the value's width: a step of one
// away from or towards zero. A 16-bit float arrives as an f32 whose low
// mantissa bits are zero, so its step is 1 << (23 - its mantissa bits); f16's
// subnormals (below 2^-14) are f32 normals, evenly 2^-24 apart, stepped as
// floats.
Value ExpandNextAfter(Elementwise& e, Value x, Value y, mlir::Type element) {
  mlir::Type image = ElementOf(x);
  const unsigned width = image.getIntOrFloatBitWidth();
  mlir::Type bits_type = e.builder().getIntegerType(width);
  auto I = [&](int64_t v) { return e.IntConstant(bits_type, v); };
  FloatMath m{e, image};
  FloatMath ints{e, bits_type};
  const int64_t sign_bit = std::numeric_limits<int64_t>::min() >> (64 - width);
  int step_shift = 0;
  if (element.isF16()) step_shift = 23 - 10;
  if (element.isBF16()) step_shift = 23 - 7;
  const int64_t step = int64_t{1} << step_shift;

  Value xb = e.Convert(x, bits_type, "bitcast_convert");
  Value yb = e.Convert(y, bits_type, "bitcast_convert");
  Value x_mag = ints.And(xb, I(~sign_bit));
  Value y_mag = ints.And(yb, I(~sign_bit));
  Value x_sign = ints.And(xb, I(sign_bit));
  Value y_sign = ints.And(yb, I(sign_bit));
  Value shrink = ints.Or(ints.Is(x_mag, "GT", y_mag), ints.Is(x_sign, "NE", y_sign));
  Value mag = ints.Add(x_mag, e.Select(shrink, I(-step), I(step)));
  // The smallest positive value of `element`, as bits of the image type.
  int64_t smallest = step;
  if (element.isF16()) {
    const float f16_min_normal = 0x1p-14f, f16_subnormal_step = 0x1p-24f;
    int32_t min_normal_bits, subnormal_step_bits;
    std::memcpy(&min_normal_bits, &f16_min_normal, 4);
    std::memcpy(&subnormal_step_bits, &f16_subnormal_step, 4);
    smallest = subnormal_step_bits;
    Value subnormal = ints.Or(ints.Is(x_mag, "LT", I(min_normal_bits)),
                              ints.And(ints.Is(x_mag, "EQ", I(min_normal_bits)), shrink));
    Value stepped = m.Add(m.Unary("abs", x),
                          e.Select(shrink, m.C(-f16_subnormal_step), m.C(f16_subnormal_step)));
    mag = e.Select(subnormal, e.Convert(stepped, bits_type, "bitcast_convert"), mag);
    // Down from infinity: f16's largest finite value is not next to it as f32.
    const float f16_max = 65504.0f, infinity = std::numeric_limits<float>::infinity();
    int32_t max_bits, infinity_bits;
    std::memcpy(&max_bits, &f16_max, 4);
    std::memcpy(&infinity_bits, &infinity, 4);
    mag = e.Select(ints.Is(x_mag, "EQ", I(infinity_bits)), I(max_bits), mag);
  }
  Value out = ints.Or(mag, x_sign);
  out = e.Select(ints.Is(x_mag, "EQ", I(0)), ints.Or(y_sign, I(smallest)), out);
  out = e.Select(m.Is(x, "EQ", y), yb, out);
  Value result = e.Convert(out, image, "bitcast_convert");
  Value unordered = m.Or(m.Is(x, "NE", x), m.Is(y, "NE", y));
  return e.Select(unordered, m.C(std::numeric_limits<double>::quiet_NaN()), result);
}

// Up to 32 bits: the product in 64. At 64 bits: from 32-bit halves, unsigned,
// with the signed correction hi(a b) = hi_unsigned - (a < 0 ? b : 0) -
// (b < 0 ? a : 0) (mod 2^64).
Value ExpandMulhi(Elementwise& e, Value a, Value b) {
  auto element = mlir::cast<mlir::IntegerType>(ElementOf(a));
  const unsigned width = element.getWidth();
  const bool is_signed = !element.isUnsigned();
  mlir::OpBuilder& builder = e.builder();
  if (width <= 32) {
    mlir::Type wide = is_signed ? builder.getIntegerType(64) : builder.getIntegerType(64, false);
    Value product = e.Op("multiply", {e.Convert(a, wide), e.Convert(b, wide)});
    Value high = e.Op(is_signed ? "shift_right_arithmetic" : "shift_right_logical",
                      {product, e.IntConstant(wide, width)});
    return e.Convert(high, element);
  }
  mlir::Type u64 = builder.getIntegerType(64, /*isSigned=*/false);
  Value au = is_signed ? e.Convert(a, u64, "bitcast_convert") : a;
  Value bu = is_signed ? e.Convert(b, u64, "bitcast_convert") : b;
  const Value low_mask = e.IntConstant(u64, 0xFFFFFFFF), half = e.IntConstant(u64, 32);
  auto low = [&](Value v) { return e.Op("and", {v, low_mask}); };
  auto high = [&](Value v) { return e.Op("shift_right_logical", {v, half}); };
  auto mul = [&](Value x, Value y) { return e.Op("multiply", {x, y}); };
  auto add = [&](Value x, Value y) { return e.Op("add", {x, y}); };
  Value a_lo = low(au), a_hi = high(au), b_lo = low(bu), b_hi = high(bu);
  Value lo_lo = mul(a_lo, b_lo), lo_hi = mul(a_lo, b_hi), hi_lo = mul(a_hi, b_lo);
  Value carry = high(add(add(high(lo_lo), low(lo_hi)), low(hi_lo)));
  Value out = add(add(add(mul(a_hi, b_hi), high(lo_hi)), high(hi_lo)), carry);
  if (!is_signed) return out;
  const Value zero = e.IntConstant(element, 0), zero_u = e.IntConstant(u64, 0);
  Value correction = add(e.Select(e.Compare(a, zero, "LT"), bu, zero_u),
                         e.Select(e.Compare(b, zero, "LT"), au, zero_u));
  return e.Convert(e.Op("subtract", {out, correction}), element, "bitcast_convert");
}

}  // namespace brt::bridge

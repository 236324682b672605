// f32 exp, log, tanh, logistic and erf written without calls or branches, so that
// loops over them vectorize: libm's are calls, one element at a time, and
// were most of a train step's elementwise time. exp and log are Cephes'
// range reductions and polynomials, and tanh is Cephes' too (from exp above
// |x| = 0.625). tests/unit/vector_math_test.cc
// bounds their error in ulps against float64 and checks the special values
// (NaN, infinities, zeros, subnormals) against libm.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>

namespace brt::cpu::vmath {

// Round to the nearest integer (ties to even) for |x| < 2^22 by adding and
// subtracting 1.5 * 2^23; unlike nearbyint it needs no SSE4.1 to vectorize.
inline float RoundToInt(float x) {
  constexpr float kMagic = 12582912.0f;
  return (x + kMagic) - kMagic;
}

// 2^n for an integral n in [-126, 127].
inline float Pow2(float n) { return std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23); }

// exp(x) = 2^n * exp(r): returns exp(r) and sets n, where n = round(x / ln 2)
// and r = x - n ln 2, with ln 2 split in two so that n * hi is exact. For x
// that is not NaN and |x| < 2^21.
inline float ExpReduced(float x, float* n_out) {
  const float n = RoundToInt(x * 1.44269504088896341f);
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  *n_out = n;
  return p * (r * r) + r + 1.0f;
}

inline float Exp(float x) {
  const bool nan = x != x;
  // Beyond these exp(x) rounds to +inf or +0; inside, the scaling below
  // produces them (and the subnormals in between) on its own.
  const float c = nan ? 0.0f : std::min(std::max(x, -104.0f), 89.0f);
  float n;
  const float y = ExpReduced(c, &n);
  // n is in [-150, 128]: two factors keep each power of two normal.
  const float half = RoundToInt(n * 0.5f - 0.25f);  // floor(n / 2)
  const float result = y * Pow2(half) * Pow2(n - half);
  return nan ? x : result;
}

// exp(x) for the x <= 0 of a softmax (each input minus the largest): one
// scaling instead of Exp's two, and 0 below -87 (exp(x) < 2^-125 there,
// against a sum of at least 1: below float precision). NaN stays NaN.
inline float ExpNonPositive(float x) {
  const bool nan = x != x;
  float n;
  const float y = ExpReduced(nan ? 0.0f : std::max(x, -87.0f), &n);
  return nan ? x : x < -87.0f ? 0.0f : y * Pow2(n);
}

inline float Log(float x) {
  constexpr float kMinNormal = std::numeric_limits<float>::min();
  const bool subnormal = x < kMinNormal;
  // Subnormals are scaled into the normal range first; the exponent says by how much.
  const float scaled = subnormal ? x * 8388608.0f : x;  // 2^23
  const int32_t bits = std::bit_cast<int32_t>(scaled);
  // x = m * 2^e with m in [0.5, 1), as frexp.
  float e = static_cast<float>(((bits >> 23) & 0xff) - 126) - (subnormal ? 23.0f : 0.0f);
  float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);
  // m in [sqrt(1/2), sqrt(2)), shifted to m - 1.
  const bool small = m < 0.707106781186547524f;
  e = small ? e - 1.0f : e;
  m = small ? m + m - 1.0f : m - 1.0f;
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  y = y + e * -2.12194440e-4f;
  y = y - 0.5f * z;
  float result = m + y + e * 0.693359375f;
  // log(+inf) = +inf, log(x < 0) = NaN, log(0) = -inf, log(NaN) = NaN; one
  // select after another, which vectorizes where a chain of ?: did not.
  constexpr float kInf = std::numeric_limits<float>::infinity();
  result = x == kInf ? kInf : result;
  result = x < 0.0f ? std::numeric_limits<float>::quiet_NaN() : result;
  result = x == 0.0f ? -kInf : result;
  return x != x ? x : result;
}

inline float Tanh(float x) {
  // Cephes: an odd polynomial below |x| = 0.625, 1 - 2 / (exp(2|x|) + 1) above.
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float near_zero = p * z * x + x;
  // Past 9.02, 1 - 2 / (exp(2|x|) + 1) rounds to 1: clamping at 10 keeps
  // exp's argument where one power of two scales it (NaN goes to 10 too).
  const float a = x < 0.0f ? -x : x;
  const float clamped = a < 10.0f ? a : 10.0f;
  float n;
  const float e = ExpReduced(clamped + clamped, &n) * Pow2(n);
  const float far = 1.0f - 2.0f / (e + 1.0f);
  const float signed_far = x < 0.0f ? -far : far;
  // NaN fails a >= 0.625 and takes near_zero, which is NaN.
  const float r = a >= 0.625f ? signed_far : near_zero;
  return x == 0.0f ? x : r;  // keeps the sign of -0
}

// 1 / (1 + exp(-x)), computed from exp(-|x|) <= 1 so that neither tail
// overflows to a 0 or a 1 it should not be.
inline float Logistic(float x) {
  const float e = Exp(x < 0.0f ? x : -x);
  return (x < 0.0f ? e : 1.0f) / (1.0f + e);
}

// XLA's f32 erf (ErfImpl32, which torch-mlir also writes out op by op): a
// rational function of x^2 times x on [-4, 4], clamped to [-1, 1]. x times
// p/q, not x*p over q, so that subnormal x keep their precision.
inline float Erf(float x) {
  const float c = std::min(std::max(x, -4.0f), 4.0f);  // NaN stays NaN
  const float z = c * c;
  float p = -2.72614225801306e-10f;
  p = p * z + 2.77068142495902e-08f;
  p = p * z - 2.10102402082508e-06f;
  p = p * z - 5.69250639462346e-05f;
  p = p * z - 7.34990630326855e-04f;
  p = p * z - 2.95459980854025e-03f;
  p = p * z - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * z - 2.13374055278905e-04f;
  q = q * z - 1.68282697438203e-03f;
  q = q * z - 7.37332916720468e-03f;
  q = q * z - 1.42647390514189e-02f;
  return std::min(std::max(c * (p / q), -1.0f), 1.0f);
}

}  // namespace brt::cpu::vmath

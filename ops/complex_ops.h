// Scalar semantics of the elementwise ops on complex numbers (c64, c128),
// written once over a complex type Z: std::complex on the host (whose math
// functions are C99's complex ones: cexp, clog, csqrt, ...) and
// cuda::std::complex in CUDA kernels (providers/cuda/kernel_support.cuh
// marks it complex). The complex math functions are called unqualified, so
// each type's own overloads are found. Included by scalar_ops.h after its
// Unary and Binary enums, which route complex values here; which ops take
// them is the registry's domain column (brt/ops.def: the *Complex domains).
#pragma once

#include <cmath>
#include <complex>
#include <limits>

namespace brt::ops {

template <typename V>
constexpr bool kIsComplex = false;
template <typename T>
constexpr bool kIsComplex<std::complex<T>> = true;

// exp(z) - 1 without cancellation near z = 0: the real part is
// expm1(a) cos(b) - 2 sin^2(b / 2), each term accurate on its own.
template <typename Z>
BRT_HD inline Z ComplexExpm1(Z z) {
  using T = typename Z::value_type;
  const T a = z.real(), b = z.imag();
  const T half_sin = std::sin(b / 2);
  return Z(std::expm1(a) * std::cos(b) - 2 * half_sin * half_sin, std::exp(a) * std::sin(b));
}

// log(1 + z) without cancellation near z = 0, where
// |1 + z|^2 - 1 = a (2 + a) + b^2 is small; elsewhere log(1 + z) loses nothing.
template <typename Z>
BRT_HD inline Z ComplexLog1p(Z z) {
  using T = typename Z::value_type;
  const T a = z.real(), b = z.imag();
  if (!(std::fabs(a) < T(0.5) && std::fabs(b) < T(0.5))) return log(Z(1 + a, b));
  return Z(std::log1p(a * (2 + a) + b * b) / 2, std::atan2(b, 1 + a));
}

// tanh(z) by Kahan's formula (glibc's too): with t = tan(b), s = sinh(a),
// tanh(z) = ((1 + t^2) s sqrt(1 + s^2) + i t) / (1 + (1 + t^2) s^2). libcu++'s
// own is 10x less accurate in c64. Beyond |a| = 20 the real part is +-1 and
// the imaginary part below every precision's least step, as computed.
template <typename Z>
BRT_HD inline Z ComplexTanh(Z z) {
  using T = typename Z::value_type;
  const T a = z.real(), b = z.imag();
  if (std::fabs(a) > T(20))
    return Z(std::copysign(T(1), a), 4 * std::sin(b) * std::cos(b) * std::exp(-2 * std::fabs(a)));
  const T t = std::tan(b), beta = 1 + t * t, s = std::sinh(a), rho = std::sqrt(1 + s * s);
  const T denominator = 1 + beta * s * s;
  return Z(beta * rho * s / denominator, t / denominator);
}

// sign(z) = z / |z|, 0 for 0; NaN in either part gives NaN in both (XLA's).
template <typename Z>
BRT_HD inline Z ComplexSign(Z z) {
  using T = typename Z::value_type;
  if (std::isnan(z.real()) || std::isnan(z.imag())) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    return Z(nan, nan);
  }
  const T magnitude = abs(z);
  return magnitude == 0 ? Z(0, 0) : z / magnitude;
}

// Ordering comparisons, maximum and minimum order (real, imaginary)
// lexicographically, as StableHLO does for complex operands.
template <typename Z>
BRT_HD inline bool ComplexLess(Z a, Z b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

// log(exp(a) + exp(b)) as jnp.logaddexp computes it on complex numbers: with
// m the larger of a and b (ComplexLess), m + log1p(exp(a + b - 2m)), its
// imaginary part brought into [-pi, pi) (the principal logarithm's range).
template <typename Z>
BRT_HD inline Z ComplexLogAddExp(Z a, Z b) {
  using T = typename Z::value_type;
  const Z m = ComplexLess(a, b) ? b : a;
  const Z sum = m + ComplexLog1p(exp(a + b - m * T(2)));
  const T pi = T(3.14159265358979323846);
  T angle = std::fmod(sum.imag() + pi, 2 * pi);
  if (angle < 0) angle += 2 * pi;
  return Z(sum.real(), angle - pi);
}

// Defined for every op whose domain takes complex values (brt/ops.def).
template <Unary OP, typename Z>
BRT_HD inline Z ComplexUnary(Z z) {
  using O = Unary;
  if constexpr (OP == O::kNegate) return -z;
  if constexpr (OP == O::kExp) return exp(z);
  if constexpr (OP == O::kExpm1) return ComplexExpm1(z);
  if constexpr (OP == O::kLog) return log(z);
  if constexpr (OP == O::kLog1p) return ComplexLog1p(z);
  if constexpr (OP == O::kSqrt) return sqrt(z);
  if constexpr (OP == O::kRsqrt) return Z(1) / sqrt(z);
  // The principal cube root, StableHLO's (0 at 0, where log is -inf).
  if constexpr (OP == O::kCbrt) return z == Z(0) ? z : exp(log(z) / Z(3));
  if constexpr (OP == O::kTanh) return ComplexTanh(z);
  if constexpr (OP == O::kLogistic) return Z(1) / (Z(1) + exp(-z));
  if constexpr (OP == O::kSin) return sin(z);
  if constexpr (OP == O::kCos) return cos(z);
  if constexpr (OP == O::kTan) return tan(z);
  if constexpr (OP == O::kSign) return ComplexSign(z);
  if constexpr (OP == O::kSinh) return sinh(z);
  if constexpr (OP == O::kCosh) return cosh(z);
  if constexpr (OP == O::kAsin) return asin(z);
  if constexpr (OP == O::kAcos) return acos(z);
  if constexpr (OP == O::kAtan) return atan(z);
  if constexpr (OP == O::kAsinh) return asinh(z);
  if constexpr (OP == O::kAcosh) return acosh(z);
  if constexpr (OP == O::kAtanh) return atanh(z);
  return z;  // not reached: the kernel tables take complex values only where the domain does
}

template <Binary OP, typename Z>
BRT_HD inline Z ComplexBinary(Z a, Z b) {
  using O = Binary;
  if constexpr (OP == O::kAdd) return a + b;
  if constexpr (OP == O::kSub) return a - b;
  if constexpr (OP == O::kMul) return a * b;
  if constexpr (OP == O::kDiv) return a / b;
  // 0^0 is 1 (XLA's); pow gives NaN from 0 * log(0).
  if constexpr (OP == O::kPow) return a == Z(0) && b == Z(0) ? Z(1) : pow(a, b);
  // atan2(a, b) = -i log((b + i a) / sqrt(a^2 + b^2)), StableHLO's.
  if constexpr (OP == O::kAtan2) {
    const Z i(0, 1);
    return -i * log((b + i * a) / sqrt(a * a + b * b));
  }
  if constexpr (OP == O::kMax) return ComplexLess(a, b) ? b : a;
  if constexpr (OP == O::kMin) return ComplexLess(b, a) ? b : a;
  return a;  // not reached: the kernel tables take complex values only where the domain does
}

}  // namespace brt::ops

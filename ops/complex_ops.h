// Scalar semantics of the elementwise ops on complex numbers (c64, c128),
// for the host loops: std::complex, whose math functions are C99's complex
// ones (cexp, clog, csqrt, ...). Included by scalar_ops.h after its Unary
// and Binary enums, which route complex values here; which ops take them is
// the registry's domain column (brt/ops.def: the *Complex domains).
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
template <typename T>
inline std::complex<T> ComplexExpm1(std::complex<T> z) {
  const T a = z.real(), b = z.imag();
  const T half_sin = std::sin(b / 2);
  return {std::expm1(a) * std::cos(b) - 2 * half_sin * half_sin, std::exp(a) * std::sin(b)};
}

// log(1 + z) without cancellation near z = 0: |1 + z|^2 - 1 = a (2 + a) + b^2.
template <typename T>
inline std::complex<T> ComplexLog1p(std::complex<T> z) {
  const T a = z.real(), b = z.imag();
  const T big = std::max(std::abs(a), std::abs(b));
  if (!(big < T(1e-2) || (std::abs(1 + a) < T(2) && big < T(1))))
    return std::log(std::complex<T>(1 + a, b));
  return {std::log1p(a * (2 + a) + b * b) / 2, std::atan2(b, 1 + a)};
}

// sign(z) = z / |z|, 0 for 0; NaN in either part gives NaN in both (XLA's).
template <typename T>
inline std::complex<T> ComplexSign(std::complex<T> z) {
  if (std::isnan(z.real()) || std::isnan(z.imag())) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    return {nan, nan};
  }
  const T magnitude = std::abs(z);
  return magnitude == 0 ? std::complex<T>(0, 0) : z / magnitude;
}

// Ordering comparisons, maximum and minimum order (real, imaginary)
// lexicographically, as StableHLO does for complex operands.
template <typename T>
inline bool ComplexLess(std::complex<T> a, std::complex<T> b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

// Defined for every op whose domain takes complex values (brt/ops.def).
template <Unary OP, typename T>
inline std::complex<T> ComplexUnary(std::complex<T> z) {
  using C = std::complex<T>;
  using O = Unary;
  if constexpr (OP == O::kNegate) return -z;
  if constexpr (OP == O::kExp) return std::exp(z);
  if constexpr (OP == O::kExpm1) return ComplexExpm1(z);
  if constexpr (OP == O::kLog) return std::log(z);
  if constexpr (OP == O::kLog1p) return ComplexLog1p(z);
  if constexpr (OP == O::kSqrt) return std::sqrt(z);
  if constexpr (OP == O::kRsqrt) return C(1) / std::sqrt(z);
  if constexpr (OP == O::kTanh) return std::tanh(z);
  if constexpr (OP == O::kLogistic) return C(1) / (C(1) + std::exp(-z));
  if constexpr (OP == O::kSin) return std::sin(z);
  if constexpr (OP == O::kCos) return std::cos(z);
  if constexpr (OP == O::kTan) return std::tan(z);
  if constexpr (OP == O::kSign) return ComplexSign(z);
  if constexpr (OP == O::kSinh) return std::sinh(z);
  if constexpr (OP == O::kCosh) return std::cosh(z);
  if constexpr (OP == O::kAsin) return std::asin(z);
  if constexpr (OP == O::kAcos) return std::acos(z);
  if constexpr (OP == O::kAtan) return std::atan(z);
  if constexpr (OP == O::kAsinh) return std::asinh(z);
  if constexpr (OP == O::kAcosh) return std::acosh(z);
  if constexpr (OP == O::kAtanh) return std::atanh(z);
  return z;  // not reached: the kernel tables take complex values only where the domain does
}

template <Binary OP, typename T>
inline std::complex<T> ComplexBinary(std::complex<T> a, std::complex<T> b) {
  using O = Binary;
  if constexpr (OP == O::kAdd) return a + b;
  if constexpr (OP == O::kSub) return a - b;
  if constexpr (OP == O::kMul) return a * b;
  if constexpr (OP == O::kDiv) return a / b;
  // 0^0 is 1 (XLA's); std::pow gives NaN from 0 * log(0).
  if constexpr (OP == O::kPow)
    return a == std::complex<T>(0) && b == std::complex<T>(0) ? std::complex<T>(1) : std::pow(a, b);
  // atan2(a, b) = -i log((b + i a) / sqrt(a^2 + b^2)), StableHLO's.
  if constexpr (OP == O::kAtan2) {
    const std::complex<T> i(0, 1);
    return -i * std::log((b + i * a) / std::sqrt(a * a + b * b));
  }
  if constexpr (OP == O::kMax) return ComplexLess(a, b) ? b : a;
  if constexpr (OP == O::kMin) return ComplexLess(b, a) ? b : a;
  return a;  // not reached: the kernel tables take complex values only where the domain does
}

}  // namespace brt::ops

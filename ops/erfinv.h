// erfinv, which C++ lacks (CUDA has it), for host code: the registry's
// erf_inv expression calls it on the CPU and in the host-compiled kernels of
// the tests; device code gets CUDA's.
#pragma once

#include <cmath>
#include <limits>
#include <type_traits>

namespace brt::ops {

#ifndef __CUDA_ARCH__
// The inverse error function: Giles' single precision approximation, then two Newton steps on
// erf(x) = y in double, so the result is as accurate in f64 as erf itself.
template <typename T, typename = std::enable_if_t<std::is_floating_point_v<T>>>
inline T erfinv(T y) {
  if (!(y > -1 && y < 1))
    return y == 1    ? std::numeric_limits<T>::infinity()
           : y == -1 ? -std::numeric_limits<T>::infinity()
                     : std::numeric_limits<T>::quiet_NaN();
  const double yd = y;
  double w = -std::log((1.0 - yd) * (1.0 + yd)), p;
  if (w < 5) {
    w -= 2.5;
    p = 2.81022636e-08;
    for (double c : {3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                     -0.00417768164, 0.246640727, 1.50140941})
      p = c + p * w;
  } else {
    w = std::sqrt(w) - 3;
    p = -0.000200214257;
    for (double c : {0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                     0.00943887047, 1.00167406, 2.83297682})
      p = c + p * w;
  }
  double x = p * yd;
  for (int step = 0; step < 2; ++step)
    x -= (std::erf(x) - yd) /
         (1.1283791670955126 * std::exp(-x * x));  // d/dx erf = 2/sqrt(pi) e^-x^2
  return static_cast<T>(x);
}
#endif

}  // namespace brt::ops

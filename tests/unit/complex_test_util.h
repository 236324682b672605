// What the complex op tests share: elements of c64 and c128 tensors as
// std::complex<long double>, relative errors against such references, random
// values with repeating parts, and the lexicographic order StableHLO gives
// complex numbers.
#pragma once

#include <algorithm>
#include <complex>
#include <random>
#include <vector>

#include "test_util.h"

namespace brt::test {

using Z = std::complex<long double>;

// Element i of a c64 or c128 tensor, and its setter.
inline Z At(const HostTensor& t, int64_t i) {
  if (t.dtype == DType::kC64) return Z(t.as<std::complex<float>>()[i]);
  return Z(t.as<std::complex<double>>()[i]);
}
inline void SetAt(HostTensor& t, int64_t i, Z v) {
  if (t.dtype == DType::kC64)
    t.as<std::complex<float>>()[i] = std::complex<float>(v);
  else
    t.as<std::complex<double>>()[i] = std::complex<double>(v);
}

// max |got - want| / max(|want|) over every element: of a complex result,
// or of a real one against want's real parts.
inline double RelErr(const HostTensor& got, const std::vector<Z>& want) {
  long double err = 0, scale = 1e-30L;
  const bool real = got.dtype != DType::kC64 && got.dtype != DType::kC128;
  for (size_t i = 0; i < want.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i);
    const Z g = real ? Z(got.Get(k)) : At(got, k);
    err = std::max(err, std::abs(g - (real ? Z(want[i].real()) : want[i])));
    scale = std::max(scale, std::abs(want[i]));
  }
  return static_cast<double>(err / scale);
}

// Random complex values whose real parts repeat (so the imaginary part
// decides between them), in [-3, 3] + [-3, 3]i.
inline HostTensor RandomComplex(DType t, std::vector<int64_t> shape) {
  HostTensor z(t, std::move(shape));
  std::uniform_int_distribution<int> part(-12, 12);
  for (int64_t i = 0; i < z.numel(); ++i) SetAt(z, i, Z(part(Rng()) / 4.0L, part(Rng()) / 4.0L));
  return z;
}

// (real, imaginary) lexicographically.
inline bool Less(Z a, Z b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}

}  // namespace brt::test

// fft's transforms on the host, unscaled, one batch at a time, over KISS
// FFT's C++ transform (Debian's libkissfft-dev: mixed radix, any length,
// float and double alike), one dimension at a time: the CPU provider's fft,
// and what the CUDA provider's cuFFT calls compute in its host emulation
// (tests/plugins/emulated_cuda_provider.cc). Not thread-safe: KISS FFT keeps
// scratch in its transform objects, so each request holds its own.
#pragma once

#include <kissfft/kissfft.hh>

#include <algorithm>
#include <complex>
#include <vector>

#include "ops/fft_plan.h"

namespace brt::ops {

template <typename T>
class HostFft {
 public:
  using Cpx = std::complex<T>;

  // Transforms forward, or backward (unscaled) for the inverse types.
  explicit HostFft(const FftPlan& p) : p_(p), work_(p.spectrum_per_batch) {
    size_t longest = 0;
    for (int64_t n : p.lengths) {
      transforms_.emplace_back(static_cast<size_t>(n), p.inverse());
      longest = std::max(longest, static_cast<size_t>(n));
    }
    line_in_.resize(longest);
    line_out_.resize(longest);
  }

  // One batch: FFT and IFFT complex to complex, RFFT real to the half
  // spectrum, IRFFT the half spectrum to real: the outer dims transformed
  // first, then each line of the last dim extended by Hermitian symmetry
  // (the imaginary parts of frequency 0 and n/2 do not count) and inverted.
  void Run(const void* in, void* out) {
    const int last = static_cast<int>(p_.lengths.size()) - 1;
    const int64_t n = p_.lengths[last], half = p_.spectrum[last];
    switch (p_.type) {
      case FftType::kFft:
      case FftType::kIfft: {
        const Cpx* z = static_cast<const Cpx*>(in);
        std::copy(z, z + p_.spectrum_per_batch, work_.begin());
        for (int axis = last; axis >= 0; --axis) TransformAxis(axis);
        std::copy(work_.begin(), work_.end(), static_cast<Cpx*>(out));
        return;
      }
      case FftType::kRfft: {
        const T* x = static_cast<const T*>(in);
        for (int64_t line = 0; line < p_.spectrum_per_batch / half; ++line) {
          for (int64_t i = 0; i < n; ++i) line_in_[i] = Cpx(x[line * n + i], 0);
          transforms_[last].transform(line_in_.data(), line_out_.data());
          std::copy(line_out_.begin(), line_out_.begin() + half, work_.begin() + line * half);
        }
        for (int axis = last - 1; axis >= 0; --axis) TransformAxis(axis);
        std::copy(work_.begin(), work_.end(), static_cast<Cpx*>(out));
        return;
      }
      case FftType::kIrfft: {
        const Cpx* z = static_cast<const Cpx*>(in);
        std::copy(z, z + p_.spectrum_per_batch, work_.begin());
        for (int axis = last - 1; axis >= 0; --axis) TransformAxis(axis);
        T* o = static_cast<T*>(out);
        for (int64_t line = 0; line < p_.spectrum_per_batch / half; ++line) {
          const Cpx* h = work_.data() + line * half;
          for (int64_t k = 0; k < n; ++k) line_in_[k] = k < half ? h[k] : std::conj(h[n - k]);
          line_in_[0] = Cpx(h[0].real(), 0);
          if (n % 2 == 0) line_in_[n / 2] = Cpx(h[n / 2].real(), 0);
          transforms_[last].transform(line_in_.data(), line_out_.data());
          for (int64_t i = 0; i < n; ++i) o[line * n + i] = line_out_[i].real();
        }
        return;
      }
    }
  }

 private:
  // Transforms every line of work_ along spectrum dimension `axis` in place.
  void TransformAxis(int axis) {
    const int64_t n = p_.spectrum[axis];
    int64_t stride = 1;
    for (size_t d = axis + 1; d < p_.spectrum.size(); ++d) stride *= p_.spectrum[d];
    const int64_t outer = p_.spectrum_per_batch / (n * stride);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t s = 0; s < stride; ++s) {
        Cpx* base = work_.data() + o * n * stride + s;
        for (int64_t i = 0; i < n; ++i) line_in_[i] = base[i * stride];
        transforms_[axis].transform(line_in_.data(), line_out_.data());
        for (int64_t i = 0; i < n; ++i) base[i * stride] = line_out_[i];
      }
  }

  const FftPlan& p_;
  std::vector<kissfft<T>> transforms_;  // per fft dim
  std::vector<Cpx> work_, line_in_, line_out_;
};

}  // namespace brt::ops

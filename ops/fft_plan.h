// fft's plan (brt/ops.def): its validation and the shapes every provider
// transforms over, shared by the CPU provider (KISS FFT) and the CUDA
// provider (cuFFT, and KISS FFT in its host emulation). Header-only, so the
// op library's build does not change for it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ops/op_attrs.h"
#include "ops/op_info.h"

namespace brt::ops {

enum class FftType { kFft, kIfft, kRfft, kIrfft };

struct FftPlan {
  FftType type = FftType::kFft;
  std::vector<int64_t> lengths;  // fft_length: the innermost dims, outermost first
  int64_t batches = 1;           // elements of the dims before them
  // The complex array the transforms run over, per batch: the operand's
  // shape (FFT, IFFT, IRFFT's half spectrum) or the result's (RFFT).
  std::vector<int64_t> spectrum;  // its innermost lengths.size() dims
  int64_t in_per_batch = 0, out_per_batch = 0, spectrum_per_batch = 0;
  double scale = 1;           // 1 / prod(lengths) for the inverse transforms
  int32_t complex_dtype = 0;  // c64 or c128: the complex side's
  bool empty = false;         // no element in or out: nothing to compute

  bool inverse() const { return type == FftType::kIfft || type == FftType::kIrfft; }
  bool real_in() const { return type == FftType::kRfft; }
  bool real_out() const { return type == FftType::kIrfft; }
};

inline FftPlan PlanFft(const OpInfo& op) {
  op.RequireOperands(1);
  const FftAttrs attrs = Decode<FftAttrs>(op);
  FftPlan p;
  const std::string& name = attrs.fft_type;
  if (name == "FFT")
    p.type = FftType::kFft;
  else if (name == "IFFT")
    p.type = FftType::kIfft;
  else if (name == "RFFT")
    p.type = FftType::kRfft;
  else if (name == "IRFFT")
    p.type = FftType::kIrfft;
  else
    op.Require(false, "fft_type '" + name + "' is not one of FFT, IFFT, RFFT, IRFFT");
  p.lengths = attrs.fft_length;
  const int rank = static_cast<int>(p.lengths.size());
  const TensorInfo& in = op.in[0];
  const TensorInfo& out = op.out[0];
  op.Require(rank >= 1 && rank <= 3 && rank <= in.rank(),
             "fft_length has " + std::to_string(rank) + " entries; it takes 1 to 3, at most " +
                 "the operand's rank " + std::to_string(in.rank()));
  op.Require(in.rank() == out.rank(), "operand and result ranks differ");
  const int32_t complex = p.real_in() ? out.dtype : in.dtype;
  op.Require(complex == BRT_DTYPE_C64 || complex == BRT_DTYPE_C128,
             std::string("the complex side must be c64 or c128, got ") + DTypeName(complex));
  p.complex_dtype = complex;
  const int32_t part = complex == BRT_DTYPE_C64 ? BRT_DTYPE_F32 : BRT_DTYPE_F64;
  const int32_t want_in = p.real_in() ? part : complex, want_out = p.real_out() ? part : complex;
  op.Require(in.dtype == want_in && out.dtype == want_out,
             name + " takes " + DTypeName(want_in) + " to " + DTypeName(want_out) + ", got " +
                 DTypeName(in.dtype) + " to " + DTypeName(out.dtype));
  const int first = in.rank() - rank;
  const std::vector<int64_t>& real_dims = p.real_in() ? in.dims : out.dims;
  const std::vector<int64_t>& spectrum = p.real_in() ? out.dims : in.dims;
  for (int d = 0; d < in.rank(); ++d) {
    const bool fft_dim = d >= first;
    const int64_t n = fft_dim ? p.lengths[d - first] : in.dims[d];
    const bool halved = fft_dim && d == in.rank() - 1 && (p.real_in() || p.real_out());
    const int64_t want_spectrum = halved ? n / 2 + 1 : n;
    op.Require(real_dims[d] == n && spectrum[d] == want_spectrum,
               "dimension " + std::to_string(d) + ": fft_length " + FormatDims(p.lengths) +
                   " needs operand " + FormatDims(in.dims) + " and result " + FormatDims(out.dims) +
                   " to agree with it");
    if (fft_dim)
      p.spectrum.push_back(want_spectrum);
    else
      p.batches *= n;
  }
  p.spectrum_per_batch = 1;
  for (int64_t n : p.spectrum) p.spectrum_per_batch *= n;
  p.in_per_batch = p.batches ? in.numel / p.batches : 0;
  p.out_per_batch = p.batches ? out.numel / p.batches : 0;
  if (p.inverse())
    for (int64_t n : p.lengths) p.scale /= static_cast<double>(n);
  p.empty = out.numel == 0 || in.numel == 0;
  return p;
}

}  // namespace brt::ops

// fft: FFT, IFFT, RFFT and IRFFT over the innermost 1 to 3 dimensions, one
// dimension at a time, each line through KISS FFT's C++ transform (Debian's
// libkissfft-dev: mixed radix, any length, float and double alike).
#include <kissfft/kissfft.hh>

#include <complex>
#include <memory>
#include <string>
#include <vector>

#include "kernel.h"
#include "ops/op_attrs.h"

namespace brt::cpu {
namespace {

enum class FftType { kFft, kIfft, kRfft, kIrfft };

FftType ParseFftType(const OpInfo& op, const std::string& name) {
  if (name == "FFT") return FftType::kFft;
  if (name == "IFFT") return FftType::kIfft;
  if (name == "RFFT") return FftType::kRfft;
  if (name == "IRFFT") return FftType::kIrfft;
  op.Require(false, "fft_type '" + name + "' is not one of FFT, IFFT, RFFT, IRFFT");
  return FftType::kFft;
}

// What Prepare works out; the instances (one per request: KISS FFT keeps
// scratch in its transform objects) run it.
struct FftPlan {
  FftType type = FftType::kFft;
  std::vector<int64_t> lengths;  // fft_length: the innermost dims, outermost first
  int64_t batches = 1;           // elements of the dims before them
  // The complex array the transforms run over, per batch: the operand's
  // shape (FFT, IFFT, IRFFT's half spectrum) or the result's (RFFT).
  std::vector<int64_t> spectrum;  // its innermost lengths.size() dims
  int64_t in_per_batch = 0, out_per_batch = 0, spectrum_per_batch = 0;
  double scale = 1;  // 1 / prod(lengths) for the inverse transforms
};

template <typename T>
class FftInstance final : public Runnable {
  using Cpx = std::complex<T>;

 public:
  explicit FftInstance(const FftPlan& p) : p_(p), work_(p.spectrum_per_batch) {
    const bool inverse = p.type == FftType::kIfft || p.type == FftType::kIrfft;
    size_t longest = 0;
    for (int64_t n : p.lengths) {
      transforms_.emplace_back(static_cast<size_t>(n), inverse);
      longest = std::max(longest, static_cast<size_t>(n));
    }
    line_in_.resize(longest);
    line_out_.resize(longest);
  }

  void Run(void* const* b) override {
    const char* in = static_cast<const char*>(b[0]);
    char* out = static_cast<char*>(b[1]);
    const size_t in_elem = p_.type == FftType::kRfft ? sizeof(T) : sizeof(Cpx);
    const size_t out_elem = p_.type == FftType::kIrfft ? sizeof(T) : sizeof(Cpx);
    for (int64_t batch = 0; batch < p_.batches; ++batch)
      RunBatch(in + batch * p_.in_per_batch * in_elem, out + batch * p_.out_per_batch * out_elem);
  }

 private:
  void RunBatch(const char* in, char* out) {
    const int rank = static_cast<int>(p_.lengths.size());
    const int last = rank - 1;
    switch (p_.type) {
      case FftType::kFft:
      case FftType::kIfft: {
        const Cpx* z = reinterpret_cast<const Cpx*>(in);
        std::copy(z, z + p_.spectrum_per_batch, work_.begin());
        for (int axis = last; axis >= 0; --axis) TransformAxis(axis);
        Cpx* o = reinterpret_cast<Cpx*>(out);
        for (int64_t i = 0; i < p_.spectrum_per_batch; ++i) o[i] = work_[i] * T(p_.scale);
        return;
      }
      case FftType::kRfft: {
        // The last dim: each real line's transform, its first n/2 + 1 values.
        const T* x = reinterpret_cast<const T*>(in);
        const int64_t n = p_.lengths[last], half = p_.spectrum[last];
        for (int64_t line = 0; line < p_.spectrum_per_batch / half; ++line) {
          for (int64_t i = 0; i < n; ++i) line_in_[i] = Cpx(x[line * n + i], 0);
          transforms_[last].transform(line_in_.data(), line_out_.data());
          std::copy(line_out_.begin(), line_out_.begin() + half, work_.begin() + line * half);
        }
        for (int axis = last - 1; axis >= 0; --axis) TransformAxis(axis);
        std::copy(work_.begin(), work_.end(), reinterpret_cast<Cpx*>(out));
        return;
      }
      case FftType::kIrfft: {
        const Cpx* z = reinterpret_cast<const Cpx*>(in);
        std::copy(z, z + p_.spectrum_per_batch, work_.begin());
        for (int axis = last - 1; axis >= 0; --axis) TransformAxis(axis);
        // The last dim: the half spectrum extended by Hermitian symmetry (the
        // imaginary parts of frequency 0 and n/2 do not count), inverted.
        const int64_t n = p_.lengths[last], half = p_.spectrum[last];
        T* o = reinterpret_cast<T*>(out);
        for (int64_t line = 0; line < p_.spectrum_per_batch / half; ++line) {
          const Cpx* h = work_.data() + line * half;
          for (int64_t k = 0; k < n; ++k) line_in_[k] = k < half ? h[k] : std::conj(h[n - k]);
          line_in_[0] = Cpx(h[0].real(), 0);
          if (n % 2 == 0) line_in_[n / 2] = Cpx(h[n / 2].real(), 0);
          transforms_[last].transform(line_in_.data(), line_out_.data());
          for (int64_t i = 0; i < n; ++i) o[line * n + i] = T(line_out_[i].real() * p_.scale);
        }
        return;
      }
    }
  }

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

class FftKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(1);
    const FftAttrs attrs = Decode<FftAttrs>(op);
    p_.type = ParseFftType(op, attrs.fft_type);
    p_.lengths = attrs.fft_length;
    const int rank = static_cast<int>(p_.lengths.size());
    const TensorInfo& in = op.in[0];
    const TensorInfo& out = op.out[0];
    op.Require(rank >= 1 && rank <= 3 && rank <= in.rank(),
               "fft_length has " + std::to_string(rank) + " entries; it takes 1 to 3, at most " +
                   "the operand's rank " + std::to_string(in.rank()));
    op.Require(in.rank() == out.rank(), "operand and result ranks differ");
    const bool real_in = p_.type == FftType::kRfft, real_out = p_.type == FftType::kIrfft;
    const int32_t complex = real_in ? out.dtype : in.dtype;
    op.Require(complex == BRT_DTYPE_C64 || complex == BRT_DTYPE_C128,
               std::string("the complex side must be c64 or c128, got ") + DTypeName(complex));
    const int32_t part = complex == BRT_DTYPE_C64 ? BRT_DTYPE_F32 : BRT_DTYPE_F64;
    const int32_t want_in = real_in ? part : complex, want_out = real_out ? part : complex;
    op.Require(in.dtype == want_in && out.dtype == want_out,
               attrs.fft_type + " takes " + DTypeName(want_in) + " to " + DTypeName(want_out) +
                   ", got " + DTypeName(in.dtype) + " to " + DTypeName(out.dtype));
    const int first = in.rank() - rank;
    const std::vector<int64_t>& real_dims = real_in ? in.dims : out.dims;
    const std::vector<int64_t>& spectrum = real_in ? out.dims : in.dims;
    for (int d = 0; d < in.rank(); ++d) {
      const bool fft_dim = d >= first;
      const int64_t n = fft_dim ? p_.lengths[d - first] : in.dims[d];
      const bool halved = fft_dim && d == in.rank() - 1 && (real_in || real_out);
      const int64_t want_spectrum = halved ? n / 2 + 1 : n;
      op.Require(real_dims[d] == n && spectrum[d] == want_spectrum,
                 "dimension " + std::to_string(d) + ": fft_length " + FormatDims(p_.lengths) +
                     " needs operand " + FormatDims(in.dims) + " and result " +
                     FormatDims(out.dims) + " to agree with it");
      if (!fft_dim) p_.batches *= n;
      if (fft_dim) p_.spectrum.push_back(want_spectrum);
    }
    p_.spectrum_per_batch = 1;
    for (int64_t n : p_.spectrum) p_.spectrum_per_batch *= n;
    p_.in_per_batch = p_.batches ? in.numel / p_.batches : 0;
    p_.out_per_batch = p_.batches ? out.numel / p_.batches : 0;
    if (p_.type == FftType::kIfft || p_.type == FftType::kIrfft)
      for (int64_t n : p_.lengths) p_.scale /= static_cast<double>(n);
    single_ = complex == BRT_DTYPE_C64;
    empty_ = out.numel == 0 || in.numel == 0;
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    if (empty_) return nullptr;
    if (single_) return std::make_unique<FftInstance<float>>(p_);
    return std::make_unique<FftInstance<double>>(p_);
  }
  void Run(void* const*) override {}  // empty: nothing to compute; else the instance runs

 private:
  FftPlan p_;
  bool single_ = true, empty_ = false;
};

}  // namespace

void RegisterFft(std::vector<KernelDef>& defs) {
  // Keyed by the operand: RFFT's operand is real, IRFFT's result.
  defs.push_back({"fft",
                  {BRT_DTYPE_F32, BRT_DTYPE_F64, BRT_DTYPE_C64, BRT_DTYPE_C128},
                  &Make<FftKernel>,
                  true});
}

}  // namespace brt::cpu

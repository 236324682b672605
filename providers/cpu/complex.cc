// The complex-only ops: real, imag, complex, and abs of a complex number (a
// real result). The elementwise ops that also take complex values run on
// elementwise.cc's loops (ops/complex_ops.h's semantics); fft is fft.cc's.
#include <complex>
#include <cstring>

#include "kernel.h"
#include "ops/complex_parts.h"

namespace brt::cpu {
namespace {

// Calls f(T{}) with the part type (float or double) of a c64/c128 dtype.
template <typename F>
void DispatchPart(int32_t complex_dtype, F&& f) {
  if (complex_dtype == BRT_DTYPE_C64) return f(float{});
  return f(double{});
}

// real, imag and abs: one complex operand, a result of its part type.
class ComplexToRealKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    ops::CheckComplexToReal(op);
    DispatchPart(op.in[0].dtype, [&](auto part) {
      using T = decltype(part);
      if (op.kind == "real") fn_ = &Loop<T, Part::kReal>;
      if (op.kind == "imag") fn_ = &Loop<T, Part::kImag>;
      if (op.kind == "abs") fn_ = &Loop<T, Part::kMagnitude>;
    });
    n_ = op.out[0].numel;
  }
  void Run(void* const* b) override { fn_(b[0], b[1], n_); }

 private:
  enum class Part { kReal, kImag, kMagnitude };
  template <typename T, Part P>
  static void Loop(const void* in, void* out, int64_t n) {
    const std::complex<T>* z = static_cast<const std::complex<T>*>(in);
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (P == Part::kReal) o[i] = z[i].real();
      if constexpr (P == Part::kImag) o[i] = z[i].imag();
      if constexpr (P == Part::kMagnitude) o[i] = std::abs(z[i]);  // hypot: no overflow
    }
  }
  void (*fn_)(const void*, void*, int64_t) = nullptr;
  int64_t n_ = 0;
};

// complex(real, imag): two operands of the result's part type and shape.
class MakeComplexKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    ops::CheckMakeComplex(op);
    DispatchPart(op.out[0].dtype, [&](auto p) { fn_ = &Loop<decltype(p)>; });
    n_ = op.out[0].numel;
  }
  void Run(void* const* b) override { fn_(b[0], b[1], b[2], n_); }

 private:
  template <typename T>
  static void Loop(const void* re, const void* im, void* out, int64_t n) {
    const T* a = static_cast<const T*>(re);
    const T* b = static_cast<const T*>(im);
    std::complex<T>* o = static_cast<std::complex<T>*>(out);
    for (int64_t i = 0; i < n; ++i) o[i] = {a[i], b[i]};
  }
  void (*fn_)(const void*, const void*, void*, int64_t) = nullptr;
  int64_t n_ = 0;
};

// real and imag of a real number: itself, and zeros (StableHLO takes both).
class RealOfRealKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    ops::CheckRealOfReal(op);
    imag_ = op.kind == "imag";
    bytes_ = op.out[0].bytes();
  }
  void Run(void* const* b) override {
    if (imag_)
      std::memset(b[1], 0, bytes_);  // +0 in every float format
    else if (b[1] != b[0])
      std::memcpy(b[1], b[0], bytes_);
  }

 private:
  bool imag_ = false;
  size_t bytes_ = 0;
};

}  // namespace

// Before the elementwise rows: abs of a complex operand has a real result,
// so its row is keyed by the operand.
void RegisterComplex(std::vector<KernelDef>& defs) {
  for (const char* kind : {"real", "imag", "abs"})
    defs.push_back({kind, kComplexTypes, &Make<ComplexToRealKernel>, true});
  defs.push_back({"complex", kComplexTypes, &Make<MakeComplexKernel>});
  for (const char* kind : {"real", "imag"})
    defs.push_back({kind, kFloatTypes, &Make<RealOfRealKernel>, true});
}

}  // namespace brt::cpu

// fft: FFT, IFFT, RFFT and IRFFT over the innermost 1 to 3 dimensions,
// planned by ops/fft_plan.h and transformed batch by batch by ops/fft_host.h
// (KISS FFT), then scaled for the inverse types.
#include <complex>
#include <memory>
#include <vector>

#include "kernel.h"
#include "ops/fft_host.h"
#include "ops/fft_plan.h"

namespace brt::cpu {
namespace {

// One per request: KISS FFT keeps scratch in its transform objects.
template <typename T>
class FftInstance final : public Runnable {
 public:
  explicit FftInstance(const ops::FftPlan& p) : p_(p), fft_(p) {}

  void Run(void* const* b) override {
    const char* in = static_cast<const char*>(b[0]);
    char* out = static_cast<char*>(b[1]);
    const size_t in_elem = p_.real_in() ? sizeof(T) : 2 * sizeof(T);
    const size_t out_elem = p_.real_out() ? sizeof(T) : 2 * sizeof(T);
    for (int64_t batch = 0; batch < p_.batches; ++batch)
      fft_.Run(in + batch * p_.in_per_batch * in_elem, out + batch * p_.out_per_batch * out_elem);
    if (!p_.inverse()) return;
    T* parts = reinterpret_cast<T*>(out);  // real results, or complex ones part by part
    const int64_t n = p_.batches * p_.out_per_batch * (p_.real_out() ? 1 : 2);
    for (int64_t i = 0; i < n; ++i) parts[i] = static_cast<T>(parts[i] * p_.scale);
  }

 private:
  const ops::FftPlan& p_;
  ops::HostFft<T> fft_;
};

class FftKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override { p_ = ops::PlanFft(op); }
  std::unique_ptr<Runnable> CreateInstance() const override {
    if (p_.empty) return nullptr;
    if (p_.complex_dtype == BRT_DTYPE_C64) return std::make_unique<FftInstance<float>>(p_);
    return std::make_unique<FftInstance<double>>(p_);
  }
  void Run(void* const*) override {}  // empty: nothing to compute; else the instance runs

 private:
  ops::FftPlan p_;
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

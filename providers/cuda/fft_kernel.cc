// fft through cuFFT (FftLaunchPlan, library_plans.h). libcufft is opened at
// the first fft's prepare, not linked: a machine without it loads the
// provider and fails only fft ops, naming the library. cuFFT is thread-safe
// only for different plans (its documentation: host threads may run FFTs
// concurrently with different plans and disjoint outputs), and a plan
// carries its stream and work area: each request context gets a plan of its
// own, made when the context is. The plan made at prepare (which checks
// that cuFFT takes the transform) goes to the first context.
#include <cufft.h>
#include <dlfcn.h>

#include <memory>
#include <mutex>
#include <string>

#include "library_plans.h"
#include "runtime.h"

namespace brt::cuda {
namespace {

// The cuFFT entry points brt calls, from a dlopen'ed libcufft.
struct Cufft {
  decltype(&cufftCreate) create = nullptr;
  decltype(&cufftMakePlanMany64) make_plan_many = nullptr;
  decltype(&cufftSetStream) set_stream = nullptr;
  decltype(&cufftDestroy) destroy = nullptr;
  decltype(&cufftExecC2C) exec_c2c = nullptr;
  decltype(&cufftExecZ2Z) exec_z2z = nullptr;
  decltype(&cufftExecR2C) exec_r2c = nullptr;
  decltype(&cufftExecD2Z) exec_d2z = nullptr;
  decltype(&cufftExecC2R) exec_c2r = nullptr;
  decltype(&cufftExecZ2D) exec_z2d = nullptr;
};

// CUDA 13's cuFFT is libcufft.so.12 (the unversioned name where only a
// development link is installed). Loaded once; kept for the process.
const Cufft& LoadCufft() {
  static std::once_flag once;
  static Cufft lib;
  static std::string error;
  std::call_once(once, [] {
    void* handle = nullptr;
    for (const char* name : {"libcufft.so.12", "libcufft.so"})
      if (!handle) handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* why = dlerror();
      error = std::string(
                  "fft on CUDA runs on cuFFT, and libcufft.so.12 (CUDA 13's) could not be "
                  "loaded: ") +
              (why ? why : "not found") + "; install cuFFT or put its directory on LD_LIBRARY_PATH";
      return;
    }
    auto find = [&](auto* slot, const char* symbol) {
      *slot = reinterpret_cast<std::remove_reference_t<decltype(*slot)>>(dlsym(handle, symbol));
      if (!*slot && error.empty())
        error = std::string("libcufft has no ") + symbol + " (an older cuFFT than CUDA 13's?)";
    };
    find(&lib.create, "cufftCreate");
    find(&lib.make_plan_many, "cufftMakePlanMany64");
    find(&lib.set_stream, "cufftSetStream");
    find(&lib.destroy, "cufftDestroy");
    find(&lib.exec_c2c, "cufftExecC2C");
    find(&lib.exec_z2z, "cufftExecZ2Z");
    find(&lib.exec_r2c, "cufftExecR2C");
    find(&lib.exec_d2z, "cufftExecD2Z");
    find(&lib.exec_c2r, "cufftExecC2R");
    find(&lib.exec_z2d, "cufftExecZ2D");
  });
  if (!error.empty()) throw Error(BRT_ERROR_UNSUPPORTED, error);
  return lib;
}

void CheckFft(cufftResult r, const std::string& what) {
  if (r != CUFFT_SUCCESS)
    throw Error(r == CUFFT_ALLOC_FAILED ? BRT_ERROR_RESOURCE_EXHAUSTED : BRT_ERROR_INTERNAL,
                what + ": cuFFT status " + std::to_string(static_cast<int>(r)));
}

// A cuFFT plan, destroyed with its owner.
class FftPlanHandle {
 public:
  FftPlanHandle(const Cufft& lib, const FftLaunchPlan& p) : lib_(lib) {
    const ops::FftPlan& f = p.fft;
    const bool single = f.complex_dtype == BRT_DTYPE_C64;
    const cufftType type = f.real_in()    ? (single ? CUFFT_R2C : CUFFT_D2Z)
                           : f.real_out() ? (single ? CUFFT_C2R : CUFFT_Z2D)
                                          : (single ? CUFFT_C2C : CUFFT_Z2Z);
    std::vector<long long> n(f.lengths.begin(), f.lengths.end());
    const std::string what = "fft: a cuFFT plan of lengths " + ops::FormatDims(f.lengths) + " x " +
                             std::to_string(f.batches) + " batches";
    CheckFft(lib_.create(&plan_), what);
    size_t work_bytes = 0;
    // Basic layout (no embeds): each batch contiguous, as brt's tensors are.
    const cufftResult made =
        lib_.make_plan_many(plan_, static_cast<int>(n.size()), n.data(), nullptr, 1, 0, nullptr, 1,
                            0, type, f.batches, &work_bytes);
    if (made != CUFFT_SUCCESS) lib_.destroy(plan_);
    CheckFft(made, what);
  }
  ~FftPlanHandle() { lib_.destroy(plan_); }
  FftPlanHandle(const FftPlanHandle&) = delete;
  FftPlanHandle& operator=(const FftPlanHandle&) = delete;

  void Exec(const ops::FftPlan& f, const void* in, void* out, cudaStream_t stream) const {
    CheckFft(lib_.set_stream(plan_, stream), "fft: cufftSetStream");
    // cuFFT's signatures take non-const inputs; only C2R writes them, and its
    // input is the kernel's own scratch copy.
    void* i = const_cast<void*>(in);
    const int direction = f.inverse() ? CUFFT_INVERSE : CUFFT_FORWARD;
    cufftResult r = CUFFT_SUCCESS;
    if (f.complex_dtype == BRT_DTYPE_C64) {
      if (f.real_in())
        r = lib_.exec_r2c(plan_, static_cast<cufftReal*>(i), static_cast<cufftComplex*>(out));
      else if (f.real_out())
        r = lib_.exec_c2r(plan_, static_cast<cufftComplex*>(i), static_cast<cufftReal*>(out));
      else
        r = lib_.exec_c2c(plan_, static_cast<cufftComplex*>(i), static_cast<cufftComplex*>(out),
                          direction);
    } else {
      if (f.real_in())
        r = lib_.exec_d2z(plan_, static_cast<cufftDoubleReal*>(i),
                          static_cast<cufftDoubleComplex*>(out));
      else if (f.real_out())
        r = lib_.exec_z2d(plan_, static_cast<cufftDoubleComplex*>(i),
                          static_cast<cufftDoubleReal*>(out));
      else
        r = lib_.exec_z2z(plan_, static_cast<cufftDoubleComplex*>(i),
                          static_cast<cufftDoubleComplex*>(out), direction);
    }
    CheckFft(r, "fft: cuFFT exec");
  }

 private:
  const Cufft& lib_;
  cufftHandle plan_ = 0;
};

class FftKernel final : public Kernel {
 public:
  explicit FftKernel(const OpInfo& op) : p_(PlanFftLaunch(op)) {
    if (p_.fft.empty) return;
    lib_ = &LoadCufft();
    spare_ = std::make_unique<FftPlanHandle>(*lib_, p_);
  }
  Runnable* NewInstance() const override {
    if (p_.fft.empty) return nullptr;
    std::unique_ptr<FftPlanHandle> plan;
    {
      std::lock_guard<std::mutex> lock(mu_);
      plan = std::move(spare_);
    }
    if (!plan) plan = std::make_unique<FftPlanHandle>(*lib_, p_);
    return new Instance(*this, std::move(plan));
  }
  void Run(void* const*, Queue*) override {}  // empty: nothing to compute; else the instance runs

 private:
  class Instance final : public Runnable {
   public:
    Instance(const FftKernel& k, std::unique_ptr<FftPlanHandle> plan)
        : k_(k), plan_(std::move(plan)), scratch_(k.p_.scratch_bytes) {}
    void Run(void* const* b, Queue* q) override {
      RunFftSteps(k_.p_, b[0], b[1], scratch_.get(), q->stream,
                  [&](const void* in, void* out) { plan_->Exec(k_.p_.fft, in, out, q->stream); });
    }

   private:
    const FftKernel& k_;
    std::unique_ptr<FftPlanHandle> plan_;
    DeviceBuffer scratch_;
  };

  FftLaunchPlan p_;
  const Cufft* lib_ = nullptr;
  mutable std::mutex mu_;
  mutable std::unique_ptr<FftPlanHandle> spare_;  // prepare's plan, until a context takes it
};

}  // namespace

Kernel* MakeFft(const OpInfo& op) { return new FftKernel(op); }

}  // namespace brt::cuda

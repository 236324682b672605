// The fine-grained AG+GEMM on one GPU, two "ranks" as two streams: a copy
// stream lands the other ranks' chunks of the gathered rows (device-to-device
// copies standing in for the peers' pushes) and raises each chunk's flag
// with a stream memory write; the flagged GEMM (providers/nccl/
// flagged_gemm.cu) runs at the same time, each tile waiting for its chunk.
// At FLUX's AG+GEMM shape for TP=8 (M=4096 gathered rows, K=12288,
// N=49152/8), each row is a median of --iters runs (CUDA events):
//   cuBLASLt          one GEMM, no waiting (the reference for speed and values)
//   flagged, no flags the own GEMM without waiting
//   flagged, flags up the own GEMM with every flag already raised: the
//                     waits' own cost
//   copies            the chunks' copies and flag writes alone
//   serial            copies, then the GEMM
//   overlapped        the GEMM while the chunks land, its grid capped at one
//                     block per SM (blocks take several tiles) and uncapped
// and the flagged GEMM's worst relative error against cuBLASLt's output
// over its four forms. A form that makes no progress in 10 s is reported as
// a deadlock and ends the program (the GPU is freed only by its exit).
//   build/bench/flagged_gemm_bench [--iters 20] [--tp 8] [--dtype bf16,f16]
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "brt/provider_abi.h"
#include "cuda_bench_util.h"
#include "nccl/flagged_gemm.h"
#include "nccl/row_gemm.h"

namespace brt {
namespace {

using bench::Check;
using bench::MedianMs;

// cuStreamWriteValue32 through the runtime's entry points (no libcuda link):
// the flag is written by the stream itself, after the copies before it,
// with no SM needed while the GEMM's blocks hold them all.
decltype(&::cuStreamWriteValue32) StreamWriteValue32() {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found{};
  Check(cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &p, 12000, cudaEnableDefault,
                                         &found),
        "cudaGetDriverEntryPointByVersion");
  if (found != cudaDriverEntryPointSuccess)
    throw std::runtime_error("the driver has no cuStreamWriteValue32");
  return reinterpret_cast<decltype(&::cuStreamWriteValue32)>(p);
}

// Ends the program when a phase outlasts its limit: a flagged GEMM whose
// chunks cannot land (their copies needing the SMs its blocks hold) never
// finishes, and only the process's exit frees the GPU.
class Watchdog {
 public:
  Watchdog() : thread_([this] { Watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void Arm(const std::string& what, std::chrono::seconds limit) {
    std::lock_guard<std::mutex> lock(mu_);
    what_ = what;
    limit_ = limit;
    deadline_ = std::chrono::steady_clock::now() + limit;
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mu_);
    deadline_ = std::chrono::steady_clock::time_point::max();
  }

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      if (std::chrono::steady_clock::now() > deadline_) {
        std::printf("| %s: DEADLOCK (not done in %lld s) |\n", what_.c_str(),
                    static_cast<long long>(limit_.count()));
        std::fflush(stdout);
        std::_Exit(3);
      }
      wake_.wait_for(lock, std::chrono::milliseconds(100));
    }
  }
  std::mutex mu_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::string what_;
  std::chrono::seconds limit_{0};
  std::chrono::steady_clock::time_point deadline_ = std::chrono::steady_clock::time_point::max();
  std::thread thread_;
};

int RunCase(int tp, int32_t dtype, int iters) {
  using brt::nccl::FlaggedGemmShape;
  const int64_t m = 4096, k = 12288, n = 49152 / tp;
  const FlaggedGemmShape shape{m, k, n, tp, 0};
  Watchdog dog;
  if (std::string why = brt::nccl::FlaggedGemmRefusal(dtype, shape); !why.empty())
    throw std::runtime_error(why);
  const size_t chunk_bytes = m / tp * k * 2;
  bench::DeviceBuffer source(m * k * 2), landed(m * k * 2), rhs(k * n * 2), out(m * n * 2),
      ref(m * n * 2), flags(tp * sizeof(uint32_t)), workspace(brt::nccl::RowGemm::kWorkspaceBytes);
  bench::FillRandom(source.p, m * k, dtype, 1);
  bench::FillRandom(rhs.p, k * n, dtype, 2);
  Check(cudaMemcpy(landed.p, source.p, m * k * 2, cudaMemcpyDeviceToDevice), "cudaMemcpy");
  Check(cudaMemset(flags.p, 0, tp * sizeof(uint32_t)), "cudaMemset");
  // The streams below are non-blocking: nothing orders them after the copies above.
  Check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  brt::nccl::RowGemm whole;
  whole.Prepare(dtype, m, k, n, false);
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtCreate");
  cudaStream_t compute, copy;
  Check(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "cudaStreamCreate");
  // The copies get the highest priority: an SM that frees up goes to them
  // before the GEMM's blocks still waiting to start.
  int least_priority = 0, greatest_priority = 0;
  Check(cudaDeviceGetStreamPriorityRange(&least_priority, &greatest_priority),
        "cudaDeviceGetStreamPriorityRange");
  Check(cudaStreamCreateWithPriority(&copy, cudaStreamNonBlocking, greatest_priority),
        "cudaStreamCreateWithPriority");
  cudaEvent_t start, copied;
  Check(cudaEventCreateWithFlags(&start, cudaEventDisableTiming), "cudaEventCreate");
  Check(cudaEventCreateWithFlags(&copied, cudaEventDisableTiming), "cudaEventCreate");
  const auto write_value = StreamWriteValue32();
  const auto* flag = static_cast<const uint32_t*>(flags.p);
  uint32_t epoch = 0;

  int sms = 0;
  Check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  auto gemm = [&](const uint32_t* f, int64_t max_blocks) {
    Check(brt::nccl::LaunchFlaggedGemm(dtype, landed.p, rhs.p, out.p, shape, f, epoch, max_blocks,
                                       compute),
          "LaunchFlaggedGemm");
  };
  // The chunks land in ring order after the own one (chunk 0), each raising
  // its flag; the own chunk's flag goes up first.
  auto land = [&](cudaStream_t s) {
    for (int64_t i = 0; i < tp; ++i) {
      if (i > 0)
        Check(cudaMemcpyAsync(landed.c() + i * chunk_bytes, source.c() + i * chunk_bytes,
                              chunk_bytes, cudaMemcpyDeviceToDevice, s),
              "cudaMemcpyAsync");
      if (write_value(s, reinterpret_cast<CUdeviceptr>(flag + i), epoch, 0) != CUDA_SUCCESS)
        throw std::runtime_error("cuStreamWriteValue32 failed");
    }
  };
  auto serial = [&] {
    ++epoch;
    land(compute);
    gemm(flag, 0);
  };
  auto overlapped = [&](int64_t max_blocks) {
    ++epoch;
    Check(cudaEventRecord(start, compute), "cudaEventRecord");
    Check(cudaStreamWaitEvent(copy, start, 0), "cudaStreamWaitEvent");
    land(copy);
    gemm(flag, max_blocks);
    Check(cudaEventRecord(copied, copy), "cudaEventRecord");
    Check(cudaStreamWaitEvent(compute, copied, 0), "cudaStreamWaitEvent");
  };
  // Values: each variant's output (poisoned first: 0xFFFF is NaN in f16 and
  // bf16) against cuBLASLt's over the same rows, the other chunks' rows
  // poisoned too until they land.
  whole.Run(lt, landed.p, rhs.p, ref.p, false, workspace.p, compute);
  const std::vector<float> want = bench::DownloadSmallFloats(ref.p, m * n, dtype, compute);
  auto error_of = [&](const char* variant, const std::function<void()>& run) {
    Check(cudaMemsetAsync(out.p, 0xFF, m * n * 2, compute), "cudaMemsetAsync");
    Check(cudaMemsetAsync(landed.p, 0xFF, m * k * 2, compute), "cudaMemsetAsync");
    Check(cudaMemcpyAsync(landed.p, source.p, chunk_bytes, cudaMemcpyDeviceToDevice, compute),
          "cudaMemcpyAsync");  // the own chunk is there from the start
    dog.Arm(std::string(brt_dtype_name(dtype)) + " " + variant, std::chrono::seconds(10));
    run();
    const std::vector<float> got = bench::DownloadSmallFloats(out.p, m * n, dtype, compute);
    dog.Disarm();
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      num += (double(got[i]) - want[i]) * (double(got[i]) - want[i]);  // NaN stays NaN
      den += double(want[i]) * want[i];
    }
    std::fprintf(stderr, "flagged_gemm_bench: %s %s: rel. error %.1e\n", brt_dtype_name(dtype),
                 variant, std::sqrt(num / den));
    return std::sqrt(num / den);
  };
  // The uncapped overlapped form last: it is the one that may deadlock.
  double worst = 0;
  for (double e : {error_of("no flags",
                            [&] {
                              Check(cudaMemcpyAsync(landed.p, source.p, m * k * 2,
                                                    cudaMemcpyDeviceToDevice, compute),
                                    "cudaMemcpyAsync");
                              gemm(nullptr, 0);
                            }),
                   error_of("serial", serial),
                   error_of("overlapped, one block per SM", [&] { overlapped(sms); }),
                   error_of("overlapped, a block per tile", [&] { overlapped(0); })})
    worst = std::isnan(e) || std::isnan(worst) ? NAN : std::max(worst, e);

  // Each timing under the watchdog, said as it ends.
  auto timed = [&](const char* what, cudaStream_t stream, const std::function<void()>& body) {
    dog.Arm(std::string(brt_dtype_name(dtype)) + " timing " + what, std::chrono::seconds(30));
    const double ms = MedianMs(iters, stream, body);
    dog.Disarm();
    std::fprintf(stderr, "flagged_gemm_bench: %s %s: %.3f ms\n", brt_dtype_name(dtype), what, ms);
    return ms;
  };
  const double cublas_ms = timed("cuBLASLt", compute, [&] {
    whole.Run(lt, landed.p, rhs.p, ref.p, false, workspace.p, compute);
  });
  const double plain_ms = timed("no flags", compute, [&] { gemm(nullptr, 0); });
  const double flagged_ms = timed("flags up", compute, [&] { gemm(flag, 0); });
  const double copies_ms = timed("copies", copy, [&] {
    ++epoch;
    land(copy);
  });
  const double serial_ms = timed("serial", compute, serial);
  const double capped_ms = timed("overlapped, one block per SM", compute, [&] { overlapped(sms); });
  const double overlapped_ms = timed("overlapped", compute, [&] { overlapped(0); });
  const double flops = 2.0 * m * k * n;
  std::printf(
      "| %d | %s | %lldx%lldx%lld | %.3f (%.0f) | %.3f (%.0f) | %.3f | %.3f | %.3f | %.3f | %.3f | "
      "%.2f | %.2f | %.1e |\n",
      tp, brt_dtype_name(dtype), static_cast<long long>(m), static_cast<long long>(k),
      static_cast<long long>(n), cublas_ms, flops / cublas_ms / 1e9, plain_ms,
      flops / plain_ms / 1e9, flagged_ms / plain_ms, copies_ms, serial_ms, capped_ms, overlapped_ms,
      overlapped_ms / std::max(plain_ms, copies_ms), overlapped_ms / cublas_ms, worst);
  std::fflush(stdout);
  cudaEventDestroy(start);
  cudaEventDestroy(copied);
  cudaStreamDestroy(compute);
  cudaStreamDestroy(copy);
  cublasLtDestroy(lt);
  // bf16 and f16 outputs of two f32-accumulating GEMMs differ by rounding.
  return worst < 1e-2 ? 0 : 1;
}

}  // namespace
}  // namespace brt

int main(int argc, char** argv) {
  int iters = 20;
  std::vector<std::string> tps = {"8"}, dtypes = {"bf16", "f16"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--iters" && has_value)
      iters = std::atoi(argv[++i]);
    else if (a == "--tp" && has_value)
      tps = brt::bench::SplitCommas(argv[++i]);
    else if (a == "--dtype" && has_value)
      dtypes = brt::bench::SplitCommas(argv[++i]);
    else {
      std::fprintf(stderr, "usage: flagged_gemm_bench [--iters N] [--tp 8] [--dtype bf16,f16]\n");
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "flagged_gemm_bench: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("### Fine-grained AG+GEMM on one GPU (%s, medians of %d runs)\n\n", prop.name, iters);
  std::printf(
      "| tp | dtype | MxKxN | cuBLASLt ms (TFLOP/s) | flagged, no flags ms (TFLOP/s) | flags up / "
      "no flags | copies ms | serial ms | overlapped, 1 block/SM ms | overlapped ms | "
      "overlapped / max(GEMM, copies) | overlapped / cuBLASLt | worst rel. error vs cuBLASLt "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  int failed = 0;
  for (const std::string& d : dtypes)
    for (const std::string& t : tps) {
      const int32_t dtype = d == "bf16" ? BRT_DTYPE_BF16 : d == "f16" ? BRT_DTYPE_F16 : -1;
      if (dtype < 0) {
        std::fprintf(stderr, "flagged_gemm_bench: --dtype takes bf16 or f16, got '%s'\n",
                     d.c_str());
        return 2;
      }
      try {
        failed |= brt::RunCase(std::atoi(t.c_str()), dtype, iters);
      } catch (const std::exception& e) {
        std::printf("| %s | %s | FAILED: %s |\n", t.c_str(), d.c_str(), e.what());
        failed = 1;
      }
    }
  return failed;
}

// What the CUDA decomposition of AG+GEMM and GEMM+RS costs on one GPU, at
// FLUX's shapes (AG+GEMM M=4096, K=12288, N=49152; GEMM+RS M=4096, K=49152,
// N=12288) sliced per rank for tensor parallelism over `tp` ranks:
//   whole    one cuBLASLt GEMM of the rank's slice
//   chunked  the same GEMM as tp row chunks, as the nccl provider's
//            overlapped ops run it (RowGemm; GEMM+RS chunks accumulate)
//   piped    the chunks on their stream, each waiting for an event recorded
//            after a device-to-device copy of its input chunk on a second
//            stream: the ring's signalling with the copy engine as the link
// chunked / whole is the decomposition's compute overhead, which bounds
// what overlap can win on tp GPUs (docs/distributed.md). Medians of --iters
// timed runs (CUDA events). Prints a markdown table.
//
//   build/bench/chunked_gemm_bench [--iters 20] [--tp 2,4,8] [--dtype bf16,f32]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "cuda_bench_util.h"
#include "nccl/row_gemm.h"

namespace brt {
namespace {

using bench::Check;
using bench::MedianMs;

struct Case {
  const char* op;
  int64_t rows, k, n;  // the rank's GEMM: [rows, k] x [k, n]
  bool accumulate;     // GEMM+RS chunks add to the running sum
};

void RunCase(const Case& c, int tp, int32_t dtype, int iters) {
  using brt::nccl::RowGemm;
  const size_t e = brt_dtype_size(dtype);
  const int64_t chunk_rows = c.rows / tp;
  bench::DeviceBuffer lhs(c.rows * c.k * e), rhs(c.k * c.n * e), out(c.rows * c.n * e),
      landed(c.rows * c.k * e), workspace(RowGemm::kWorkspaceBytes);
  bench::FillRandom(lhs.p, c.rows * c.k, dtype, 1);
  bench::FillRandom(rhs.p, c.k * c.n, dtype, 2);
  Check(cudaMemset(out.p, 0, c.rows * c.n * e), "cudaMemset");
  RowGemm whole, chunk;
  whole.Prepare(dtype, c.rows, c.k, c.n, false);
  chunk.Prepare(dtype, chunk_rows, c.k, c.n, false);
  cublasLtHandle_t lt;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublasLtCreate");
  cudaStream_t compute, copy;
  Check(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "cudaStreamCreate");
  Check(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking), "cudaStreamCreate");
  std::vector<cudaEvent_t> arrived(tp + 1);
  for (auto& ev : arrived)
    Check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
  const size_t lhs_chunk = chunk_rows * c.k * e, out_chunk = chunk_rows * c.n * e;
  const double whole_ms = MedianMs(
      iters, compute, [&] { whole.Run(lt, lhs.p, rhs.p, out.p, false, workspace.p, compute); });
  auto chunks = [&](bool piped) {
    if (piped) {  // the copy stream starts with the compute stream
      Check(cudaEventRecord(arrived[tp], compute), "cudaEventRecord");
      Check(cudaStreamWaitEvent(copy, arrived[tp], 0), "cudaStreamWaitEvent");
    }
    for (int i = 0; i < tp; ++i) {
      const char* src = lhs.c() + i * lhs_chunk;
      if (piped) {
        Check(cudaMemcpyAsync(landed.c() + i * lhs_chunk, src, lhs_chunk, cudaMemcpyDeviceToDevice,
                              copy),
              "cudaMemcpyAsync");
        Check(cudaEventRecord(arrived[i], copy), "cudaEventRecord");
        Check(cudaStreamWaitEvent(compute, arrived[i], 0), "cudaStreamWaitEvent");
        src = landed.c() + i * lhs_chunk;
      }
      // GEMM+RS: every chunk accumulates into one running-sum block.
      chunk.Run(lt, src, rhs.p, out.c() + (c.accumulate ? 0 : i * out_chunk), c.accumulate && i > 0,
                workspace.p, compute);
    }
  };
  const double chunked_ms = MedianMs(iters, compute, [&] { chunks(false); });
  const double copy_ms = MedianMs(iters, copy, [&] {
    for (int i = 0; i < tp; ++i)
      Check(cudaMemcpyAsync(landed.c() + i * lhs_chunk, lhs.c() + i * lhs_chunk, lhs_chunk,
                            cudaMemcpyDeviceToDevice, copy),
            "cudaMemcpyAsync");
  });
  const double piped_ms = MedianMs(iters, compute, [&] { chunks(true); });
  const double flops = 2.0 * c.rows * c.k * c.n;
  std::printf(
      "| %s | %d | %s | %lldx%lldx%lld | %lld | %.3f (%.0f) | %.3f (%.0f) | %.3f | %.3f | %.3f | "
      "%.3f |\n",
      c.op, tp, brt_dtype_name(dtype), static_cast<long long>(c.rows), static_cast<long long>(c.k),
      static_cast<long long>(c.n), static_cast<long long>(chunk_rows), whole_ms,
      flops / whole_ms / 1e9, chunked_ms, flops / chunked_ms / 1e9, chunked_ms / whole_ms, copy_ms,
      piped_ms, piped_ms / std::max(chunked_ms, copy_ms));
  std::fflush(stdout);
  for (auto& ev : arrived) cudaEventDestroy(ev);
  cudaStreamDestroy(compute);
  cudaStreamDestroy(copy);
  cublasLtDestroy(lt);
}

}  // namespace
}  // namespace brt

int main(int argc, char** argv) {
  int iters = 20;
  std::vector<std::string> tps = {"2", "4", "8"}, dtypes = {"bf16", "f32"};
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
      std::fprintf(stderr,
                   "usage: chunked_gemm_bench [--iters N] [--tp 2,4,8] [--dtype bf16,f32]\n");
      return 2;
    }
  }
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "chunked_gemm_bench: no CUDA device\n");
    return 2;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  std::printf("### Chunked GEMM at FLUX's shapes (%s, medians of %d runs)\n\n", prop.name, iters);
  std::printf(
      "| op | tp | dtype | rank GEMM (MxKxN) | chunk rows | whole ms (TFLOP/s) | chunked ms "
      "(TFLOP/s) | chunked / whole | copies ms | piped ms | piped / max(chunked, copies) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  try {
    for (const std::string& d : dtypes) {
      const int32_t dtype = d == "f32" ? BRT_DTYPE_F32 : d == "bf16" ? BRT_DTYPE_BF16 : -1;
      if (dtype < 0) throw std::runtime_error("--dtype takes bf16 and f32, not " + d);
      for (const std::string& t : tps) {
        const int tp = std::atoi(t.c_str());
        if (tp < 1 || 4096 % tp) throw std::runtime_error("--tp must divide 4096, not " + t);
        // AG+GEMM: the gathered rows times this rank's column slice.
        brt::RunCase({"AG+GEMM", 4096, 12288, 49152 / tp, false}, tp, dtype, iters);
        // GEMM+RS: all rows times this rank's K slice, summed over ranks.
        brt::RunCase({"GEMM+RS", 4096, 49152 / tp, 12288, true}, tp, dtype, iters);
      }
    }
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "chunked_gemm_bench: %s\n", ex.what());
    return 1;
  }
  return 0;
}

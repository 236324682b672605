// Host dispatch overhead: a chain of N elementwise ops on 1-element f32
// tensors, so the kernels do almost nothing and the time is the runtime's
// per-op cost (dispatch loop, kernel entry, broadcasting setup).
#include <benchmark/benchmark.h>

#include "brt/builder.h"
#include "brt/session.h"

namespace {

std::shared_ptr<brt::Session> Chain(int64_t n, const char* kind) {
  brt::ExecutableBuilder b("dispatch-bench");
  brt::FunctionBuilder& f = b.AddFunction("chain");
  brt::ValueId x = f.Input("x", brt::DType::kF32, {1});
  brt::ValueId c = f.Input("c", brt::DType::kF32, {1});
  brt::ValueId h = x;
  for (int64_t i = 0; i < n; ++i)
    h = std::string(kind) == "negate" ? f.Op(kind, {h}, {{brt::DType::kF32, {1}}})[0]
                                      : f.Op(kind, {h, c}, {{brt::DType::kF32, {1}}})[0];
  f.Output("y", h);
  auto s = brt::Session::LoadMemory(b.Serialize().value());
  if (!s.ok()) std::abort();
  return *s;
}

void RunChain(benchmark::State& state, const char* kind) {
  const int64_t n = state.range(0);
  auto session = Chain(n, kind);
  auto ctx = std::move(session->NewRequest().value());
  float x = 1.0f, c = 1e-3f, y = 0;
  if (!ctx->Bind("x", brt::Tensor::Borrow(&x, brt::DType::kF32, {1})).ok() ||
      !ctx->Bind("c", brt::Tensor::Borrow(&c, brt::DType::kF32, {1})).ok() ||
      !ctx->Bind("y", brt::Tensor::Borrow(&y, brt::DType::kF32, {1})).ok())
    std::abort();
  for (auto _ : state) {
    if (!ctx->Run().ok()) std::abort();
    benchmark::DoNotOptimize(y);
  }
  // Seconds per op, printed with an SI prefix ("31.2n" is 31.2 ns).
  state.counters["time_per_op"] =
      benchmark::Counter(static_cast<double>(n) * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void BM_DispatchUnary(benchmark::State& state) { RunChain(state, "negate"); }
void BM_DispatchBinary(benchmark::State& state) { RunChain(state, "add"); }

BENCHMARK(BM_DispatchUnary)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DispatchBinary)->Arg(10000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();

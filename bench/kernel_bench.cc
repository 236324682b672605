// Key CPU kernels through the whole runtime (a one-op executable run by a
// request context), at model-like sizes: matmul, batched attention matmul,
// softmax, layer norm, add, row reduction, transpose, gather,
// convolution. Counters give FLOP/s or bytes/s so kernels compare to peaks.
#include <benchmark/benchmark.h>

#include <cmath>
#include <optional>
#include <random>

#include "brt/builder.h"
#include "brt/session.h"

namespace {

using brt::Attribute;
using brt::DType;
using Shape = std::vector<int64_t>;

struct OneOp {
  std::string kind;
  std::vector<std::pair<DType, Shape>> inputs;
  std::pair<DType, Shape> result;
  std::vector<Attribute> attrs;
  size_t weights = 0;            // the last `weights` inputs are program constants (f32)
  std::optional<float> scalars;  // rank-0 f32 inputs (a reduction's init): random if unset
};

std::vector<brt::Dim> Dims(const Shape& s) { return {s.begin(), s.end()}; }

// Builds, loads and binds the op once; the loop times Run() only.
void RunOneOp(benchmark::State& state, const OneOp& op, double work_per_run, const char* unit) {
  brt::ExecutableBuilder b("kernel-bench");
  brt::FunctionBuilder& f = b.AddFunction("op");
  std::vector<brt::ValueId> args;
  std::mt19937 rng(11);
  const size_t bound = op.inputs.size() - op.weights;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const std::string name = "in" + std::to_string(i);
    if (i < bound) {
      args.push_back(f.Input(name, op.inputs[i].first, Dims(op.inputs[i].second)));
      continue;
    }
    int64_t count = 1;
    for (int64_t d : op.inputs[i].second) count *= d;
    std::vector<float> values(count);
    std::uniform_real_distribution<float> d(-1, 1);
    for (float& v : values) v = d(rng);
    args.push_back(
        f.Weight(name, DType::kF32, op.inputs[i].second,
                 {reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)}));
  }
  f.Output("out", f.Op(op.kind, args, {{op.result.first, Dims(op.result.second)}}, op.attrs)[0]);
  auto bytes = b.Serialize();
  if (!bytes.ok()) return state.SkipWithError(bytes.status().ToString().c_str());
  auto session = brt::Session::LoadMemory(*bytes);
  if (!session.ok()) return state.SkipWithError(session.status().ToString().c_str());
  auto ctx = std::move((*session)->NewRequest().value());
  std::vector<brt::Tensor> inputs;
  for (size_t i = 0; i < bound; ++i) {
    auto t = brt::Tensor::Allocate(op.inputs[i].first, op.inputs[i].second);
    if (op.inputs[i].first == DType::kF32 && op.inputs[i].second.empty() && op.scalars) {
      *static_cast<float*>(t.data()) = *op.scalars;
    } else if (op.inputs[i].first == DType::kF32) {
      std::uniform_real_distribution<float> d(-1, 1);
      for (int64_t e = 0; e < t.num_elements(); ++e) static_cast<float*>(t.data())[e] = d(rng);
    } else {  // i32 indices: small, in range of the tables below
      std::uniform_int_distribution<int32_t> d(0, 999);
      for (int64_t e = 0; e < t.num_elements(); ++e) static_cast<int32_t*>(t.data())[e] = d(rng);
    }
    if (!ctx->Bind(static_cast<int>(i), t).ok()) return state.SkipWithError("bind failed");
    inputs.push_back(std::move(t));
  }
  for (auto _ : state)
    if (auto s = ctx->Run(); !s.ok()) return state.SkipWithError(s.ToString().c_str());
  state.counters[unit] =
      benchmark::Counter(work_per_run * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

std::vector<Attribute> DotAttrs(Shape lb, Shape rb, Shape lc, Shape rc) {
  return {{"lhs_batching_dimensions", lb},
          {"rhs_batching_dimensions", rb},
          {"lhs_contracting_dimensions", lc},
          {"rhs_contracting_dimensions", rc}};
}

void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  RunOneOp(state,
           {"dot_general",
            {{DType::kF32, {n, n}}, {DType::kF32, {n, n}}},
            {DType::kF32, {n, n}},
            DotAttrs({}, {}, {1}, {0})},
           2.0 * n * n * n, "FLOP/s");
}

// Activations [m, k] by constant weights [k, n], as in a BERT layer (brt's
// packed GEMM where oneDNN runs AVX2: ONEDNN_MAX_CPU_ISA=AVX2 with and without
// BRT_CPU_ISA=baseline compares it with oneDNN's AVX2 matmul).
void BM_MatmulByWeights(benchmark::State& state) {
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  RunOneOp(state,
           {"dot_general",
            {{DType::kF32, {m, k}}, {DType::kF32, {k, n}}},
            {DType::kF32, {m, n}},
            DotAttrs({}, {}, {1}, {0}),
            /*weights=*/1},
           2.0 * m * n * k, "FLOP/s");
}

// BERT's intermediate projection, [m, 384] x [384, 1536] + bias, as
// brt.matmul with the activation state.range(1) names (0 none, 1 relu,
// 2 GELU): what an epilogue costs over the GEMM.
void BM_MatmulEpilogue(benchmark::State& state) {
  const int64_t m = state.range(0), k = 384, n = 1536;
  static const char* kActivations[] = {"none", "relu", "gelu"};
  auto attrs = DotAttrs({}, {}, {1}, {0});
  attrs.push_back({"activation", std::string(kActivations[state.range(1)])});
  RunOneOp(state,
           {"brt.matmul",
            {{DType::kF32, {m, k}}, {DType::kF32, {k, n}}, {DType::kF32, {n}}},
            {DType::kF32, {m, n}},
            attrs,
            /*weights=*/2},
           2.0 * m * n * k, "FLOP/s");
}

// Attention scores: [batch*heads, seq, 64] x [batch*heads, seq, 64]^T.
void BM_AttentionScores(benchmark::State& state) {
  const int64_t bh = 8, seq = state.range(0), d = 64;
  RunOneOp(state,
           {"dot_general",
            {{DType::kF32, {bh, seq, d}}, {DType::kF32, {bh, seq, d}}},
            {DType::kF32, {bh, seq, seq}},
            DotAttrs({0}, {0}, {2}, {2})},
           2.0 * bh * seq * seq * d, "FLOP/s");
}

// MiniLM's attention at batch state.range(0): q, k, v [b, 128, 12, 32] as the
// projections write them, a padding mask [b, 1, 128, 128], the result back
// in [b, 128, 12, 32]: brt.attention, the CPU's fused op.
void BM_Attention(benchmark::State& state) {
  const int64_t b = state.range(0), s = 128, h = 12, d = 32;
  const Shape qkv = {b, s, h, d}, layout = {0, 2, 1, 3};
  RunOneOp(
      state,
      {"brt.attention",
       {{DType::kF32, qkv}, {DType::kF32, qkv}, {DType::kF32, qkv}, {DType::kF32, {b, 1, s, s}}},
       {DType::kF32, qkv},
       {{"q_dims", layout},
        {"k_dims", layout},
        {"v_dims", layout},
        {"permutation", layout},
        {"scale", 0.17677669529663687}}},
      4.0 * b * h * s * s * d, "FLOP/s");
}

void BM_Softmax(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  RunOneOp(
      state,
      {"brt.softmax", {{DType::kF32, {rows, cols}}}, {DType::kF32, {rows, cols}}, {{"axis", 1}}},
      2.0 * 4 * rows * cols, "bytes/s");
}

void BM_LayerNorm(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  RunOneOp(state,
           {"brt.layer_norm",
            {{DType::kF32, {rows, cols}}, {DType::kF32, {cols}}, {DType::kF32, {cols}}},
            {DType::kF32, {rows, cols}},
            {{"epsilon", 1e-5}}},
           2.0 * 4 * rows * cols, "bytes/s");
}

void BM_Add(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  RunOneOp(state,
           {"add",
            {{DType::kF32, {rows, cols}}, {DType::kF32, {rows, cols}}},
            {DType::kF32, {rows, cols}}},
           3.0 * 4 * rows * cols, "bytes/s");
}

void BM_ReduceRows(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  RunOneOp(state,
           {"reduce",
            {{DType::kF32, {rows, cols}}, {DType::kF32, {}}},
            {DType::kF32, {rows}},
            {{"dimensions", Shape{1}}, {"reducer", "add"}}},
           4.0 * rows * cols, "bytes/s");
}

// Mean pooling's sum over the sequence: [batch, seq, hidden] over seq.
void BM_ReduceMiddle(benchmark::State& state) {
  const int64_t b = state.range(0), s = state.range(1), h = state.range(2);
  RunOneOp(state,
           {"reduce",
            {{DType::kF32, {b, s, h}}, {DType::kF32, {}}},
            {DType::kF32, {b, h}},
            {{"dimensions", Shape{1}}, {"reducer", "add"}}},
           4.0 * b * s * h, "bytes/s");
}

void BM_Transpose(benchmark::State& state) {
  const int64_t b = 8, s = state.range(0), h = 4, d = 64;
  RunOneOp(state,
           {"transpose",
            {{DType::kF32, {b, s, h, d}}},
            {DType::kF32, {b, h, s, d}},
            {{"permutation", Shape{0, 2, 1, 3}}}},
           2.0 * 4 * b * s * h * d, "bytes/s");
}

// A whole-matrix transpose: [rows, 1024] -> [1024, rows] (a weight gradient
// turned around, as JAX's backward writes it).
void BM_TransposeMatrix(benchmark::State& state) {
  const int64_t rows = state.range(0), cols = 1024;
  RunOneOp(state,
           {"transpose",
            {{DType::kF32, {rows, cols}}},
            {DType::kF32, {cols, rows}},
            {{"permutation", Shape{1, 0}}}},
           2.0 * 4 * rows * cols, "bytes/s");
}

// Embedding lookup: 4096 ids into a [1000, 256] table.
void BM_GatherRows(benchmark::State& state) {
  const int64_t ids = state.range(0), width = 256;
  RunOneOp(state,
           {"gather",
            {{DType::kF32, {1000, width}}, {DType::kI32, {ids, 1}}},
            {DType::kF32, {ids, width}},
            {{"offset_dims", Shape{1}},
             {"collapsed_slice_dims", Shape{0}},
             {"start_index_map", Shape{0}},
             {"index_vector_dim", 1},
             {"slice_sizes", Shape{1, width}}}},
           2.0 * 4 * ids * width, "bytes/s");
}

// 2x2 max pooling, stride 2, over NHWC (the JAX CNN's first, [8, 32, 32, 16],
// and second, [8, 16, 16, 32]): the init is -inf.
void BM_MaxPool(benchmark::State& state) {
  const int64_t n = 8, hw = state.range(0), c = state.range(1);
  RunOneOp(state,
           {"reduce_window",
            {{DType::kF32, {n, hw, hw, c}}, {DType::kF32, {}}},
            {DType::kF32, {n, hw / 2, hw / 2, c}},
            {{"window_dimensions", Shape{1, 2, 2, 1}},
             {"window_strides", Shape{1, 2, 2, 1}},
             {"reducer", std::string("max")}},
            /*weights=*/0,
            /*scalars=*/-INFINITY},
           4.0 * n * hw * hw * c * 5 / 4, "bytes/s");
}

// 3x3 convolution, NHWC / HWIO as the compiler emits for JAX's default.
void BM_Conv3x3(benchmark::State& state) {
  const int64_t n = 8, hw = state.range(0), c = 32, k = 32;
  RunOneOp(state,
           {"convolution",
            {{DType::kF32, {n, hw, hw, c}}, {DType::kF32, {3, 3, c, k}}},
            {DType::kF32, {n, hw, hw, k}},
            {{"window_strides", Shape{1, 1}},
             {"padding", Shape{1, 1, 1, 1}},
             {"lhs_dilation", Shape{1, 1}},
             {"rhs_dilation", Shape{1, 1}},
             {"feature_group_count", 1},
             {"batch_group_count", 1},
             {"input_batch_dimension", 0},
             {"input_feature_dimension", 3},
             {"input_spatial_dimensions", Shape{1, 2}},
             {"kernel_input_feature_dimension", 2},
             {"kernel_output_feature_dimension", 3},
             {"kernel_spatial_dimensions", Shape{0, 1}},
             {"output_batch_dimension", 0},
             {"output_feature_dimension", 3},
             {"output_spatial_dimensions", Shape{1, 2}}}},
           2.0 * n * hw * hw * k * c * 9, "FLOP/s");
}

BENCHMARK(BM_Matmul)->Arg(64)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatmulByWeights)
    ->Args({32, 256, 512})  // the JAX MLP's layers
    ->Args({32, 512, 512})
    ->Args({32, 512, 10})
    ->Args({32, 512, 16})
    ->Args({32, 512, 32})
    ->Args({32, 512, 64})
    ->Args({32, 512, 128})
    ->Args({32, 512, 256})
    ->Args({128, 384, 10})
    ->Args({128, 384, 32})
    ->Args({128, 384, 128})
    ->Args({128, 384, 256})
    ->Args({128, 256, 256})  // the JAX encoder block's
    ->Args({128, 256, 1024})
    ->Args({128, 1024, 256})
    ->Args({128, 384, 384})  // MiniLM's at 1x128 and 32x128
    ->Args({128, 384, 1536})
    ->Args({128, 1536, 384})
    ->Args({4096, 384, 384})
    ->Args({4096, 384, 1536})
    ->Args({4096, 1536, 384})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatmulEpilogue)->ArgsProduct({{4096}, {0, 1, 2}})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AttentionScores)->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Attention)->Arg(1)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Softmax)->Args({32, 10})->Args({4096, 512})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_LayerNorm)->Args({128, 256})->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Add)->Args({16, 64})->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceRows)->Args({4096, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ReduceMiddle)->Args({32, 128, 384})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Transpose)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TransposeMatrix)->Arg(256)->Arg(1024)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GatherRows)->Arg(4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MaxPool)->Args({32, 16})->Args({16, 32})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Conv3x3)->Arg(32)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();

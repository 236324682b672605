// CUDA graphs of a function with a symbolic batch, kept per shape: a request
// context that moves between shapes replays each shape's own graph, never
// one recorded at another shape. Run on the CPU (no graphs) and, with BRT_TEST_DEVICE=cuda,
// on the emulated CUDA provider, which records and replays graphs as the
// real one does; results against a float64 reference of random inputs.
#include "test_util.h"

namespace brt::test {
namespace {

constexpr int64_t kIn = 6, kOut = 5;

// y[b, kOut] = relu(x[b, kIn] . w + bias), everything on the test device.
struct DenseRelu {
  HostTensor w = Random(DType::kF32, {kIn, kOut}, Rng());
  HostTensor bias = Random(DType::kF32, {kOut}, Rng());

  Expected<std::shared_ptr<Session>> Load(SessionOptions options = TestOptions()) const {
    ExecutableBuilder b("shape-graphs-test");
    FunctionBuilder& f = b.AddFunction("main");
    const Device d = TestDevice();
    auto bytes = [](const HostTensor& t) {
      return std::span<const uint8_t>(static_cast<const uint8_t*>(t.data()), t.num_bytes());
    };
    const Dim batch("b");
    ValueId x = f.Input("x", DType::kF32, {batch, kIn}, d);
    ValueId wv = f.Weight("w", DType::kF32, w.shape, bytes(w), d);
    ValueId bv = f.Weight("bias", DType::kF32, bias.shape, bytes(bias), d);
    const float zero = 0;
    const std::vector<uint8_t> zero_bytes(reinterpret_cast<const uint8_t*>(&zero),
                                          reinterpret_cast<const uint8_t*>(&zero) + 4);
    ValueId z = f.Op("constant", {}, {{DType::kF32, {}}}, {{"value", zero_bytes}}, d)[0];
    ValueId y = f.Op("dot_general", {x, wv}, {{DType::kF32, {batch, kOut}}},
                     {{"lhs_contracting_dimensions", std::vector<int64_t>{1}},
                      {"rhs_contracting_dimensions", std::vector<int64_t>{0}}},
                     d)[0];
    y = f.Op("add", {y, bv}, {{DType::kF32, {batch, kOut}}}, {}, d)[0];
    f.Output("y", f.Op("maximum", {y, z}, {{DType::kF32, {batch, kOut}}}, {}, d)[0]);
    return LoadBuilt(b, options);
  }

  std::vector<double> Reference(const HostTensor& x) const {
    const int64_t n = x.shape[0];
    std::vector<double> y(n * kOut);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < kOut; ++c) {
        double acc = bias.Get(c);
        for (int64_t i = 0; i < kIn; ++i) acc += x.Get(r * kIn + i) * w.Get(i * kOut + c);
        y[r * kOut + c] = std::max(acc, 0.0);
      }
    return y;
  }
};

// Runs x[b] for each b on one context; returns whether each run replayed a
// graph, checking every result against the reference.
std::vector<bool> RunBatches(const DenseRelu& model, RequestContext& ctx,
                             const std::vector<int64_t>& batches) {
  std::vector<bool> replayed;
  for (int64_t b : batches) {
    HostTensor x = Random(DType::kF32, {b, kIn}, Rng());
    HostTensor y(DType::kF32, {b, kOut});
    EXPECT_TRUE(ctx.Bind("x", x.view()).ok());
    EXPECT_TRUE(ctx.Bind("y", y.view()).ok());
    const Status ran = ctx.Run();
    EXPECT_TRUE(ran.ok()) << ran.ToString();
    EXPECT_LT(RelError(y.ToDouble(), model.Reference(x)), 1e-5) << "batch " << b;
    replayed.push_back(ctx.last_run_replayed_graph());
  }
  return replayed;
}

// Shapes A, B, A, B, ...: each shape's first run goes op by op, its second
// records its own graph, and later ones replay it, whatever ran in between.
TEST(ShapeGraphs, AlternatingShapesReplayTheirOwnGraphs) {
  DenseRelu model;
  auto session = model.Load();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest().value());
  const bool g = TestDevice().kind == DeviceKind::kCuda;
  EXPECT_EQ(RunBatches(model, *ctx, {3, 7, 3, 7, 3, 7, 7, 3}),
            std::vector<bool>({false, false, g, g, g, g, g, g}));
  ShapeGraphStats stats = ctx->graph_stats();
  EXPECT_EQ(stats.misses, g ? 2 : 0);  // one recording per shape
  EXPECT_EQ(stats.hits, g ? 4 : 0);
  EXPECT_EQ(stats.kept, g ? 1 : 0);  // 7 kept while 3 runs
  EXPECT_EQ(stats.evictions, 0);
  // Disabling drops them: back on, the current shape (which ran op by op)
  // records, and one left while they were off starts over.
  ctx->SetGraphCapture(false);
  EXPECT_EQ(RunBatches(model, *ctx, {3, 7}), std::vector<bool>({false, false}));
  EXPECT_EQ(ctx->graph_stats().kept, 0);
  ctx->SetGraphCapture(true);
  EXPECT_EQ(RunBatches(model, *ctx, {7, 3, 3, 7}), std::vector<bool>({g, false, g, g}));
}

// At most max_shape_graphs shapes are kept, the least recently left dropped
// first; with 0, a shape change drops the graph and alternating shapes run
// op by op.
TEST(ShapeGraphs, KeptShapesAreBounded) {
  DenseRelu model;
  SessionOptions options = TestOptions();
  options.max_shape_graphs = 2;
  auto session = model.Load(options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest().value());
  const bool g = TestDevice().kind == DeviceKind::kCuda;
  // 2 and 3 kept, then 4 is left and drops 2 (left first).
  RunBatches(model, *ctx, {2, 2, 3, 3, 4, 4, 5});
  EXPECT_EQ(ctx->graph_stats().kept, g ? 2 : 0);
  EXPECT_EQ(ctx->graph_stats().evictions, g ? 1 : 0);
  EXPECT_EQ(RunBatches(model, *ctx, {3, 2}), std::vector<bool>({g, false}));

  options.max_shape_graphs = 0;
  auto unkept = model.Load(options);
  ASSERT_TRUE(unkept.ok()) << unkept.status().ToString();
  ctx = std::move((*unkept)->NewRequest().value());
  EXPECT_EQ(RunBatches(model, *ctx, {3, 7, 3, 7, 7}),
            std::vector<bool>({false, false, false, false, g}));
  EXPECT_EQ(ctx->graph_stats().kept, 0);
  options.max_shape_graphs = -1;
  ExpectError(model.Load(options).status(), {"max_shape_graphs", ">= 0"});
}

}  // namespace
}  // namespace brt::test

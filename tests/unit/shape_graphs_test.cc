// CUDA graphs of a function with a symbolic batch: a request context that
// moves between shapes runs each shape's own ops, never a graph recorded at
// another shape. Run on the CPU (no graphs) and, with BRT_TEST_DEVICE=cuda,
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

  Expected<std::shared_ptr<Session>> Load() const {
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
    return LoadBuilt(b, TestOptions());
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

// Shapes A, B, A, B, ... on one context, each input bound at the same host
// memory: every run gives its own shape's result.
TEST(ShapeGraphs, AlternatingShapesRunTheirOwnOps) {
  DenseRelu model;
  auto session = model.Load();
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest().value());
  std::vector<bool> replayed;
  for (int64_t b : {3, 7, 3, 7, 3, 7, 7, 7}) {
    HostTensor x = Random(DType::kF32, {b, kIn}, Rng());
    HostTensor y(DType::kF32, {b, kOut});
    ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
    ASSERT_TRUE(ctx->Bind("y", y.view()).ok());
    const Status ran = ctx->Run();
    ASSERT_TRUE(ran.ok()) << ran.ToString();
    EXPECT_LT(RelError(y.ToDouble(), model.Reference(x)), 1e-5) << "batch " << b;
    replayed.push_back(ctx->last_run_replayed_graph());
  }
  // Every shape change drops the graph: the alternating runs go op by op;
  // the third run of one shape records and replays.
  const bool graphs = TestDevice().kind == DeviceKind::kCuda;
  EXPECT_EQ(replayed,
            std::vector<bool>({false, false, false, false, false, false, graphs, graphs}));
}

}  // namespace
}  // namespace brt::test

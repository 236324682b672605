// Session and RequestContext behaviour: metadata, binding checks, symbolic
// dimensions, ownership modes, async runs, in-place state, statistics.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdlib>

#include "test_util.h"

namespace brt::test {
namespace {

std::shared_ptr<Session> MlpSession(const Mlp& mlp, Dim batch) {
  ExecutableBuilder b("session-test");
  mlp.Build(b.AddFunction("mlp"), batch);
  auto s = LoadBuilt(b);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

TEST(Session, ListsFunctionsAndArguments) {
  Mlp mlp(Rng());
  auto s = MlpSession(mlp, "batch");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->producer(), "session-test");
  EXPECT_EQ(s->provider_names(), std::vector<std::string>{"cpu"});
  auto f = s->function("mlp");
  ASSERT_TRUE(f.ok());
  const FunctionInfo& info = **f;
  ASSERT_EQ(info.arguments.size(), 8u);  // x, 6 weights, probabilities
  EXPECT_EQ(info.arguments[0].name, "x");
  EXPECT_EQ(info.arguments[0].role, ArgRole::kInput);
  EXPECT_EQ(info.arguments[0].shape, (std::vector<Dim>{"batch", 16}));
  EXPECT_EQ(info.arguments[1].role, ArgRole::kWeight);
  EXPECT_EQ(info.arguments[7].role, ArgRole::kOutput);
  EXPECT_EQ(info.input_indices, std::vector<int>{0});
  EXPECT_EQ(info.output_indices, std::vector<int>{7});
  ExpectError(s->function("nope").status(), {"no function named 'nope'", "mlp"});
}

TEST(Session, SymbolicBatchRunsAtSeveralSizes) {
  Mlp mlp(Rng());
  auto s = MlpSession(mlp, "batch");
  ASSERT_TRUE(s);
  auto ctx = s->NewRequest();
  ASSERT_TRUE(ctx.ok());
  for (int64_t n : {5, 1, 17, 5}) {
    HostTensor x = Random(DType::kF32, {n, 16}, Rng());
    ASSERT_TRUE((*ctx)->Bind("x", x.view()).ok());
    ASSERT_TRUE((*ctx)->Run().ok());
    auto out = (*ctx)->Output("probabilities");
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->shape(), (std::vector<int64_t>{n, 10}));
    HostTensor got(DType::kF32, out->shape());
    std::memcpy(got.data(), out->data(), out->num_bytes());
    EXPECT_LE(RelError(got.ToDouble(), mlp.Reference(x)), 1e-5) << "batch " << n;
  }
}

TEST(Session, BindingErrorsNameTheArgument) {
  Mlp mlp(Rng());
  auto s = MlpSession(mlp, "batch");
  ASSERT_TRUE(s);
  auto ctx = std::move(s->NewRequest().value());
  HostTensor f64 = Random(DType::kF64, {2, 16}, Rng());
  ExpectError(ctx->Bind("x", f64.view()), {"'x' (argument 0)", "expected dtype f32, got f64"});
  HostTensor bad_shape = Random(DType::kF32, {2, 15}, Rng());
  ExpectError(ctx->Bind("x", bad_shape.view()), {"'x'", "expected shape [?batch,16], got [2,15]"});
  HostTensor bad_rank = Random(DType::kF32, {16}, Rng());
  ExpectError(ctx->Bind(0, bad_rank.view()), {"expected rank 2"});
  HostTensor ok = Random(DType::kF32, {2, 16}, Rng());
  ExpectError(ctx->Bind("y", ok.view()), {"no argument named 'y'", "x, layer1.w"});
  ExpectError(ctx->Bind(42, ok.view()), {"argument index 42 is out of range"});
  ExpectError(ctx->Bind("layer1.w", ok.view()), {"is a weight"});
  ExpectError(
      ctx->Bind("x", Tensor::Borrow(ok.data(), DType::kF32, {2, 16}, {DeviceKind::kCuda, 0})),
      {"expected a tensor on cpu:0, got one on cuda:0"});
  ExpectError(
      ctx->Bind("x", Tensor::Borrow(static_cast<char*>(ok.data()) + 1, DType::kF32, {2, 16})),
      {"not aligned to its 4-byte element size"});
  // Arguments that disagree on a symbol bind (a new shape is bound one
  // argument at a time) and the run says which.
  HostTensor wrong_batch = Random(DType::kF32, {3, 10}, Rng());
  ASSERT_TRUE(ctx->Bind("x", ok.view()).ok());
  ASSERT_TRUE(ctx->Bind("probabilities", wrong_batch.view()).ok());
  ExpectError(ctx->Run(),
              {"'probabilities'", "dimension 0 is 3, but symbol 'batch' is 2 from argument 'x'"});
  ExpectError(ctx->Output("probabilities").status(), {"has not been produced yet"});
  HostTensor batch3 = Random(DType::kF32, {3, 16}, Rng());
  ASSERT_TRUE(ctx->Bind("x", batch3.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  auto fresh = std::move(s->NewRequest().value());
  ExpectError(fresh->Run(), {"input 'x' (argument 0) is not bound"});
}

TEST(Session, OwnershipModes) {
  Mlp mlp(Rng());
  auto s = MlpSession(mlp, 4);
  ASSERT_TRUE(s);
  HostTensor x = Random(DType::kF32, {4, 16}, Rng());
  const std::vector<double> ref = mlp.Reference(x);
  auto run = [&](RequestContext& ctx) {
    EXPECT_TRUE(ctx.Run().ok());
    HostTensor got(DType::kF32, {4, 10});
    std::memcpy(got.data(), ctx.Output(0 + 7)->data(), got.num_bytes());
    return RelError(got.ToDouble(), ref);
  };
  {  // copied: the caller may overwrite its buffer right after Bind
    auto ctx = std::move(s->NewRequest().value());
    HostTensor scratch = x;
    ASSERT_TRUE(ctx->Bind("x", scratch.view(), Ownership::kCopied).ok());
    std::memset(scratch.data(), 0, scratch.num_bytes());
    EXPECT_LE(run(*ctx), 1e-5);
  }
  std::atomic<int> released{0};
  {  // runtime-owned: released exactly once, when the context lets go
    auto ctx = std::move(s->NewRequest().value());
    float* p = static_cast<float*>(std::malloc(x.num_bytes()));
    std::memcpy(p, x.data(), x.num_bytes());
    ASSERT_TRUE(ctx->Bind("x",
                          Tensor::Adopt(p, DType::kF32, {4, 16},
                                        [&](void* q) { std::free(q), ++released; }),
                          Ownership::kRuntimeOwned)
                    .ok());
    EXPECT_LE(run(*ctx), 1e-5);
    EXPECT_EQ(released.load(), 0);
  }
  EXPECT_EQ(released.load(), 1);
}

TEST(Session, HeldOutputsAreNotOverwrittenByTheNextRun) {
  Mlp mlp(Rng());
  auto s = MlpSession(mlp, 3);
  ASSERT_TRUE(s);
  auto ctx = std::move(s->NewRequest().value());
  HostTensor a = Random(DType::kF32, {3, 16}, Rng()), b = Random(DType::kF32, {3, 16}, Rng());
  ASSERT_TRUE(ctx->Bind("x", a.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  Tensor first = ctx->Output("probabilities").value();
  std::vector<float> kept(first.data_as<float>(), first.data_as<float>() + 30);
  ASSERT_TRUE(ctx->Bind("x", b.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  Tensor second = ctx->Output("probabilities").value();
  EXPECT_NE(first.data(), second.data());
  EXPECT_EQ(std::vector<float>(first.data_as<float>(), first.data_as<float>() + 30), kept);
  ctx.reset();
  s.reset();
  EXPECT_EQ(std::vector<float>(first.data_as<float>(), first.data_as<float>() + 30),
            kept);  // outlives the session
}

TEST(Session, RunAsyncThenWait) {
  Mlp mlp(Rng());
  auto s = MlpSession(mlp, 6);
  ASSERT_TRUE(s);
  auto ctx = std::move(s->NewRequest().value());
  HostTensor x = Random(DType::kF32, {6, 16}, Rng());
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  ASSERT_TRUE(ctx->RunAsync().ok());
  ExpectError(ctx->RunAsync(), {"already in flight"});
  ASSERT_TRUE(ctx->Wait().ok());
  HostTensor got(DType::kF32, {6, 10});
  std::memcpy(got.data(), ctx->Output("probabilities")->data(), got.num_bytes());
  EXPECT_LE(RelError(got.ToDouble(), mlp.Reference(x)), 1e-5);
}

TEST(Session, OutputAliasUpdatesStateInPlace) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("step");
  ValueId state = f.State("accumulator", DType::kF32, {8});
  ValueId x = f.Input("x", DType::kF32, {8});
  f.Output("accumulator_out", f.Op("add", {state, x}, {{DType::kF32, {8}}})[0], "accumulator");
  auto s = LoadBuilt(b);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto ctx = std::move((*s)->NewRequest().value());
  HostTensor acc = Random(DType::kF32, {8}, Rng()), in = Random(DType::kF32, {8}, Rng());
  std::vector<double> expect = acc.ToDouble();
  ASSERT_TRUE(ctx->Bind("accumulator", acc.view()).ok());
  ASSERT_TRUE(ctx->Bind("x", in.view()).ok());
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(ctx->Run().ok());
    for (int i = 0; i < 8; ++i) expect[i] = static_cast<float>(expect[i] + in.Get(i));
  }
  EXPECT_EQ(acc.ToDouble(), expect);
  EXPECT_EQ(ctx->Output("accumulator_out")->data(), acc.data());
  ExpectError(ctx->Bind("accumulator_out", acc.view()), {"written in place of"});
}

TEST(Session, AllocatorStatisticsTrackArenasAndOutputs) {
  Mlp mlp(Rng());
  auto s = MlpSession(mlp, 64);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->allocator_stats().bytes_in_use, 0);
  {
    auto ctx = std::move(s->NewRequest().value());
    HostTensor x = Random(DType::kF32, {64, 16}, Rng());
    ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
    ASSERT_TRUE(ctx->Run().ok());
    AllocatorStats st = s->allocator_stats();
    // Arena: two live [64,32] activations at most (planned reuse), plus the [64,10] output.
    EXPECT_GE(st.bytes_in_use, 64 * 10 * 4);
    EXPECT_LE(st.bytes_in_use, 64 * 32 * 4 * 3 + 64 * 10 * 4);
    EXPECT_GE(st.peak_bytes_in_use, st.bytes_in_use);
  }
  EXPECT_EQ(s->allocator_stats().bytes_in_use, 0);
}

// A reshape's result shares its operand's bytes: tanh's result, reshaped,
// feeds exp while tanh's is still needed at the end, so without sharing three
// [64,32] f32 values would be live at once; with it, two. Values are right
// with the plan from the file (static shapes) and the one made at run time
// (a symbolic batch).
TEST(Session, ReshapesShareTheirOperandsBytes) {
  for (Dim batch : {Dim(64), Dim("n")}) {
    ExecutableBuilder b("session-test");
    FunctionBuilder& f = b.AddFunction("f");
    ValueId x = f.Input("x", DType::kF32, {batch, 32});
    ValueId t = f.Op("tanh", {x}, {{DType::kF32, {batch, 32}}})[0];
    ValueId r = f.Op("reshape", {t}, {{DType::kF32, {batch, 4, 8}}})[0];
    ValueId e = f.Op("exponential", {r}, {{DType::kF32, {batch, 4, 8}}})[0];
    ValueId back = f.Op("reshape", {e}, {{DType::kF32, {batch, 32}}})[0];
    f.Output("y", f.Op("add", {t, back}, {{DType::kF32, {batch, 32}}})[0]);
    auto s = LoadBuilt(b);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    auto ctx = std::move((*s)->NewRequest().value());
    HostTensor in = Random(DType::kF32, {64, 32}, Rng());
    ASSERT_TRUE(ctx->Bind("x", in.view()).ok());
    ASSERT_TRUE(ctx->Run().ok());
    const float* y = ctx->Output("y")->data_as<float>();
    for (int64_t i = 0; i < in.numel(); ++i) {
      const double th = std::tanh(in.Get(i));
      ASSERT_NEAR(y[i], th + std::exp(th), 1e-5) << i;
    }
    const int64_t value_bytes = 64 * 32 * 4;
    EXPECT_EQ((*s)->allocator_stats().bytes_in_use, 2 * value_bytes + value_bytes)  // arena + y
        << FormatDims({batch});
  }
}

// In-place results (op_flags::kInPlace, kInPlaceFirstOperand): exp,
// dynamic_update_slice, add and subtract write over an operand nothing reads
// afterwards (subtract over its second: its first is read later); multiply
// reads its operand twice and sine's operand is read later, so both get
// their own bytes. Three [rows,32] f32 values would be live at once (at the
// add); in place, two. Values are right with the plan from the file and the
// run-time one, for brt's loops and (4096 rows) oneDNN's primitives.
TEST(Session, ResultsWrittenOverDeadOperands) {
  for (int64_t rows : {64, 4096})
    for (Dim batch : {Dim(rows), Dim("n")}) {
      ExecutableBuilder b("session-test");
      FunctionBuilder& f = b.AddFunction("f");
      const TensorType value{DType::kF32, {batch, 32}};
      ValueId x = f.Input("x", DType::kF32, {batch, 32});
      ValueId update = f.Input("update", DType::kF32, {2, 32});
      ValueId row = f.Input("row", DType::kI32, {});
      ValueId col = f.Input("col", DType::kI32, {});
      ValueId t = f.Op("tanh", {x}, {value})[0];
      ValueId q = f.Op("multiply", {t, t}, {value})[0];
      ValueId e = f.Op("exponential", {q}, {value})[0];
      ValueId u = f.Op("dynamic_update_slice", {e, update, row, col}, {value})[0];
      ValueId s = f.Op("sine", {u}, {value})[0];
      ValueId w = f.Op("add", {s, u}, {value})[0];
      ValueId d = f.Op("subtract", {u, w}, {value})[0];
      f.Output("y", f.Op("multiply", {d, u}, {value})[0]);
      BuildReport report;
      ASSERT_TRUE(b.Serialize(&report).ok());
      if (batch.is_static()) {
        ASSERT_EQ(report.functions.size(), 1u);
        EXPECT_EQ(report.functions[0].shared_results, 4);  // e, u, w, d
      }
      auto sess = LoadBuilt(b);
      ASSERT_TRUE(sess.ok()) << sess.status().ToString();
      auto ctx = std::move((*sess)->NewRequest().value());
      HostTensor in = Random(DType::kF32, {rows, 32}, Rng());
      HostTensor up = Random(DType::kF32, {2, 32}, Rng());
      HostTensor r = HostTensor::FromDouble(DType::kI32, {}, {9});
      HostTensor c = HostTensor::FromDouble(DType::kI32, {}, {0});
      for (auto [name, h] : {std::pair{"x", &in}, {"update", &up}, {"row", &r}, {"col", &c}})
        ASSERT_TRUE(ctx->Bind(name, h->view()).ok()) << name;
      ASSERT_TRUE(ctx->Run().ok());
      const float* y = ctx->Output("y")->data_as<float>();
      for (int64_t i = 0; i < in.numel(); ++i) {
        const int64_t rw = i / 32;
        const double th = std::tanh(in.Get(i));
        const double uu = rw == 9 || rw == 10 ? up.Get(i - 9 * 32) : std::exp(th * th);
        ASSERT_NEAR(y[i], (uu - (std::sin(uu) + uu)) * uu, 1e-5) << i;
      }
      const int64_t value_bytes = rows * 32 * 4;
      EXPECT_EQ((*sess)->allocator_stats().bytes_in_use, 2 * value_bytes + value_bytes)  // + y
          << rows << " " << FormatDims({batch});
    }
}

TEST(Session, LoadFileUsesWeightsFromTheMappedFile) {
  Mlp mlp(Rng());
  ExecutableBuilder b;
  mlp.Build(b.AddFunction("mlp"), 2);
  char path[] = "/tmp/brt_session_test_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_TRUE(b.Save(path).ok());
  auto s = Session::LoadFile(path);
  unlink(path);  // the mapping keeps the bytes alive
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto ctx = std::move((*s)->NewRequest().value());
  HostTensor x = Random(DType::kF32, {2, 16}, Rng());
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  HostTensor got(DType::kF32, {2, 10});
  std::memcpy(got.data(), ctx->Output(7)->data(), got.num_bytes());
  EXPECT_LE(RelError(got.ToDouble(), mlp.Reference(x)), 1e-5);
  ExpectError(Session::LoadFile("/nonexistent/model.brtx").status(),
              {"cannot open '/nonexistent/model.brtx'"});
}

}  // namespace
}  // namespace brt::test

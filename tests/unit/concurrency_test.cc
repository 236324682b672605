// One Session shared by 8 threads, each running its own request contexts
// (sync and async, different batch sizes): every result must be bit-identical
// to the single-threaded run of the same input. Runs under TSan too.
#include <thread>

#include "test_util.h"

namespace brt::test {
namespace {

TEST(Concurrency, EightThreadsShareOneSession) {
  Mlp mlp(Rng());
  ExecutableBuilder b("concurrency-test");
  mlp.Build(b.AddFunction("mlp"), "batch");
  auto loaded = LoadBuilt(b);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::shared_ptr<Session> session = *loaded;

  constexpr int kThreads = 8, kInputs = 24, kRounds = 6;
  std::vector<HostTensor> inputs;
  std::vector<std::vector<float>> expected;
  for (int i = 0; i < kInputs; ++i) {
    inputs.push_back(Random(DType::kF32, {1 + i % 5, 16}, Rng()));
    auto ctx = std::move(session->NewRequest().value());
    EXPECT_TRUE(ctx->Bind("x", inputs.back().view()).ok());
    EXPECT_TRUE(ctx->Run().ok());
    Tensor out = ctx->Output("probabilities").value();
    expected.emplace_back(out.data_as<float>(), out.data_as<float>() + out.num_elements());
  }

  std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto sync_ctx = session->NewRequest();
      auto async_ctx = session->NewRequest();
      if (!sync_ctx.ok() || !async_ctx.ok()) return void(++failures[t]);
      for (int r = 0; r < kRounds; ++r)
        for (int k = 0; k < kInputs; ++k) {
          const int i = (k + t * 3 + r) % kInputs;
          RequestContext& ctx = (k % 2) ? **async_ctx : **sync_ctx;
          HostTensor x = inputs[i];  // each thread binds its own copy
          Status s = ctx.Bind("x", x.view());
          if (s.ok()) s = (k % 2) ? ctx.RunAsync() : ctx.Run();
          if (s.ok() && k % 2) s = ctx.Wait();
          if (!s.ok()) {
            ++failures[t];
            continue;
          }
          Tensor out = ctx.Output("probabilities").value();
          if (std::vector<float>(out.data_as<float>(), out.data_as<float>() + out.num_elements()) !=
              expected[i])
            ++mismatches[t];
        }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
}

// The shared kernels that keep per-thread scratch (brt.attention's score
// buffers, thread_local) run by 4 threads at once: each result bit-identical
// to the one-thread run of the same input.
TEST(Concurrency, AttentionScratchPerThread) {
  ExecutableBuilder b("concurrency-attention");
  FunctionBuilder& f = b.AddFunction("attention");
  const std::vector<Dim> qkv = {2, 24, 3, 16};
  const ValueId q = f.Input("q", DType::kF32, qkv), k = f.Input("k", DType::kF32, qkv),
                v = f.Input("v", DType::kF32, qkv);
  const std::vector<int64_t> layout = {0, 2, 1, 3};
  f.Output("out", f.Op("brt.attention", {q, k, v}, {{DType::kF32, qkv}},
                       {{"q_dims", layout},
                        {"k_dims", layout},
                        {"v_dims", layout},
                        {"permutation", layout},
                        {"scale", 0.25}})[0]);
  auto loaded = LoadBuilt(b);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  std::shared_ptr<Session> session = *loaded;

  constexpr int kThreads = 4, kInputs = 6, kRounds = 4;
  std::vector<std::vector<HostTensor>> inputs(kInputs);
  std::vector<std::vector<float>> expected;
  for (int i = 0; i < kInputs; ++i) {
    auto ctx = std::move(session->NewRequest().value());
    for (const char* name : {"q", "k", "v"}) {
      inputs[i].push_back(Random(DType::kF32, {2, 24, 3, 16}, Rng(), -2, 2));
      EXPECT_TRUE(ctx->Bind(name, inputs[i].back().view()).ok());
    }
    EXPECT_TRUE(ctx->Run().ok());
    Tensor out = ctx->Output("out").value();
    expected.emplace_back(out.data_as<float>(), out.data_as<float>() + out.num_elements());
  }
  std::vector<int> mismatches(kThreads, 0), failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto ctx = session->NewRequest();
      if (!ctx.ok()) return void(++failures[t]);
      for (int r = 0; r < kRounds; ++r)
        for (int n = 0; n < kInputs; ++n) {
          const int i = (n + t + r) % kInputs;
          std::vector<HostTensor> own = inputs[i];  // each thread binds its own copies
          Status s = Status::Ok();
          const char* names[] = {"q", "k", "v"};
          for (int a = 0; a < 3 && s.ok(); ++a) s = (*ctx)->Bind(names[a], own[a].view());
          if (s.ok()) s = (*ctx)->Run();
          if (!s.ok()) {
            ++failures[t];
            continue;
          }
          Tensor out = (*ctx)->Output("out").value();
          if (std::vector<float>(out.data_as<float>(), out.data_as<float>() + out.num_elements()) !=
              expected[i])
            ++mismatches[t];
        }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
}

}  // namespace
}  // namespace brt::test

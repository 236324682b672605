// One Session shared by 8 threads, each running its own request contexts
// (sync and async, different batch sizes): every result must be bit-identical
// to the single-threaded run of the same input. Runs under TSan too.
#include <functional>
#include <thread>

#include "test_util.h"

namespace brt::test {
namespace {

// Binds input `input` to the context from copies it puts in `own`, which
// outlive the run (each run binds its own copies).
using Bind = std::function<Status(RequestContext&, int input, std::vector<HostTensor>& own)>;

// Each of `threads` threads runs `rounds` passes over the inputs on its own
// request contexts of the shared session, alternating sync and async runs:
// every output `output` must be bit-identical to expected[input].
void ExpectSameResultsOnThreads(Session& session, int threads, int rounds, const Bind& bind,
                                const char* output,
                                const std::vector<std::vector<float>>& expected) {
  const int inputs = static_cast<int>(expected.size());
  std::vector<int> mismatches(threads, 0), failures(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto sync_ctx = session.NewRequest();
      auto async_ctx = session.NewRequest();
      if (!sync_ctx.ok() || !async_ctx.ok()) return void(++failures[t]);
      for (int r = 0; r < rounds; ++r)
        for (int k = 0; k < inputs; ++k) {
          const int i = (k + t * 3 + r) % inputs;
          RequestContext& ctx = (k % 2) ? **async_ctx : **sync_ctx;
          std::vector<HostTensor> own;
          Status s = bind(ctx, i, own);
          if (s.ok()) s = (k % 2) ? ctx.RunAsync() : ctx.Run();
          if (s.ok() && k % 2) s = ctx.Wait();
          if (!s.ok()) {
            ++failures[t];
            continue;
          }
          Tensor out = ctx.Output(output).value();
          if (std::vector<float>(out.data_as<float>(), out.data_as<float>() + out.num_elements()) !=
              expected[i])
            ++mismatches[t];
        }
    });
  }
  for (auto& th : pool) th.join();
  for (int t = 0; t < threads; ++t) {
    EXPECT_EQ(failures[t], 0) << "thread " << t;
    EXPECT_EQ(mismatches[t], 0) << "thread " << t;
  }
}

// The one-thread result of `output` after bind(ctx, i), for each input.
std::vector<std::vector<float>> OneThreadResults(Session& session, int inputs, const Bind& bind,
                                                 const char* output) {
  std::vector<std::vector<float>> expected;
  for (int i = 0; i < inputs; ++i) {
    auto ctx = std::move(session.NewRequest().value());
    std::vector<HostTensor> own;
    EXPECT_TRUE(bind(*ctx, i, own).ok());
    EXPECT_TRUE(ctx->Run().ok());
    Tensor out = ctx->Output(output).value();
    expected.emplace_back(out.data_as<float>(), out.data_as<float>() + out.num_elements());
  }
  return expected;
}

// The test MLP over a symbolic batch, run by `threads` threads on `count`
// inputs of 1 to 5 rows, each result compared with one thread's.
void ExpectMlpSameOnThreads(const SessionOptions& options, int threads, int rounds, int count,
                            std::shared_ptr<Session>* loaded_session) {
  Mlp mlp(Rng());
  ExecutableBuilder b("concurrency-test");
  mlp.Build(b.AddFunction("mlp"), "batch");
  auto loaded = LoadBuilt(b, options);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  *loaded_session = *loaded;
  std::vector<HostTensor> inputs;
  for (int i = 0; i < count; ++i) inputs.push_back(Random(DType::kF32, {1 + i % 5, 16}, Rng()));
  const Bind bind = [&](RequestContext& ctx, int i, std::vector<HostTensor>& own) {
    own = {inputs[i]};
    return ctx.Bind("x", own[0].view());
  };
  ExpectSameResultsOnThreads(**loaded, threads, rounds, bind, "probabilities",
                             OneThreadResults(**loaded, count, bind, "probabilities"));
}

TEST(Concurrency, EightThreadsShareOneSession) {
  std::shared_ptr<Session> session;
  ExpectMlpSameOnThreads(TestOptions(), /*threads=*/8, /*rounds=*/6, /*count=*/24, &session);
}

// Five batch sizes over two plans (SessionOptions::max_shape_plans): plans
// are dropped while other threads' contexts still run them, and every
// result stays what one thread computes.
TEST(Concurrency, ShapePlansEvictedWhileInUse) {
  SessionOptions options = TestOptions();
  options.max_shape_plans = 2;
  std::shared_ptr<Session> session;
  ExpectMlpSameOnThreads(options, /*threads=*/4, /*rounds=*/4, /*count=*/10, &session);
  ASSERT_TRUE(session);
  const ShapePlanStats stats = session->shape_plan_stats().value();
  EXPECT_LE(stats.plans, 2);
  EXPECT_GT(stats.evictions, 0);
}

// The shared kernels that keep per-thread scratch (brt.attention's score
// buffers, thread_local) run by 4 threads at once.
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

  std::vector<std::vector<HostTensor>> inputs(6);
  for (auto& qkv_values : inputs)
    for (int a = 0; a < 3; ++a)
      qkv_values.push_back(Random(DType::kF32, {2, 24, 3, 16}, Rng(), -2, 2));
  const Bind bind = [&](RequestContext& ctx, int i, std::vector<HostTensor>& own) {
    own = inputs[i];
    Status s = Status::Ok();
    const char* names[] = {"q", "k", "v"};
    for (int a = 0; a < 3 && s.ok(); ++a) s = ctx.Bind(names[a], own[a].view());
    return s;
  };
  ExpectSameResultsOnThreads(*session, /*threads=*/4, /*rounds=*/4, bind, "out",
                             OneThreadResults(*session, 6, bind, "out"));
}

}  // namespace
}  // namespace brt::test

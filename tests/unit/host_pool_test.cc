// The Session's host thread pool (SessionOptions::intra_op_threads,
// allow_spinning, linger_microseconds): its options, 8 threads submitting
// to two Sessions of different thread counts, Sessions made and dropped
// while another one runs, a process idle after a burst of requests using no
// CPU, lingering or not, and the spinning after a request bounded. Runs
// under TSan too.
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "test_util.h"

namespace brt::test {
namespace {

constexpr int64_t kRows = 384, kWidth = 256;

// y = tanh(x w + b) and y's rows sorted: a matmul, an elementwise op big
// enough to be split over the threads, and a parallel sort.
struct Program {
  HostTensor w = Random(DType::kF32, {kWidth, kWidth}, Rng(), -0.1, 0.1);
  HostTensor b = Random(DType::kF32, {kWidth}, Rng());

  void Build(ExecutableBuilder& builder) const {
    auto bytes = [](const HostTensor& t) {
      return std::span<const uint8_t>(static_cast<const uint8_t*>(t.data()), t.num_bytes());
    };
    FunctionBuilder& f = builder.AddFunction("main");
    const std::vector<Dim> shape = {kRows, kWidth};
    ValueId x = f.Input("x", DType::kF32, shape);
    ValueId wv = f.Weight("w", DType::kF32, w.shape, bytes(w));
    ValueId bv = f.Weight("b", DType::kF32, b.shape, bytes(b));
    ValueId bias = f.Op("broadcast_in_dim", {bv}, {{DType::kF32, shape}},
                        {{"broadcast_dimensions", std::vector<int64_t>{1}}})[0];
    ValueId h = f.Op("dot_general", {x, wv}, {{DType::kF32, shape}},
                     {{"lhs_contracting_dimensions", std::vector<int64_t>{1}},
                      {"rhs_contracting_dimensions", std::vector<int64_t>{0}}})[0];
    h = f.Op("add", {h, bias}, {{DType::kF32, shape}})[0];
    ValueId y = f.Op("tanh", {h}, {{DType::kF32, shape}})[0];
    f.Output("y", y);
    f.Output("sorted", f.Op("sort", {y}, {{DType::kF32, shape}},
                            {{"dimension", int64_t{1}},
                             {"key", int64_t{0}},
                             {"order", "ascending"},
                             {"total_order", int64_t{0}}})[0]);
  }

  // tanh(x w + b) in double.
  std::vector<double> Reference(const HostTensor& x) const {
    std::vector<double> y(kRows * kWidth);
    auto floats = [](const HostTensor& t) { return static_cast<const float*>(t.data()); };
    const float *xv = floats(x), *wv = floats(w), *bv = floats(b);
    for (int64_t r = 0; r < kRows; ++r)
      for (int64_t c = 0; c < kWidth; ++c) {
        double sum = bv[c];
        for (int64_t k = 0; k < kWidth; ++k)
          sum += double(xv[r * kWidth + k]) * double(wv[k * kWidth + c]);
        y[r * kWidth + c] = std::tanh(sum);
      }
    return y;
  }
};

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.num_elements());
}

// The process's CPU time, all threads, user and system: the kernel's count
// that /proc/self/stat shows in ticks, here to the nanosecond.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::shared_ptr<Session> Load(const Program& p, int threads, bool spinning = true,
                              int linger_us = 0) {
  SessionOptions options;
  options.intra_op_threads = threads;
  options.allow_spinning = spinning;
  options.linger_microseconds = linger_us;
  ExecutableBuilder builder("host-pool-test");
  p.Build(builder);
  auto loaded = LoadBuilt(builder, options);
  EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
  return loaded.ok() ? *loaded : nullptr;
}

// Runs `x` on a fresh context of `s`: {y, sorted}.
std::pair<std::vector<float>, std::vector<float>> RunOnce(Session& s, HostTensor& x) {
  auto ctx = s.NewRequest();
  EXPECT_TRUE(ctx.ok());
  EXPECT_TRUE((*ctx)->Bind("x", x.view()).ok());
  Status run = (*ctx)->Run();
  EXPECT_TRUE(run.ok()) << run.ToString();
  if (!run.ok()) return {};
  return {Values((*ctx)->Output("y").value()), Values((*ctx)->Output("sorted").value())};
}

TEST(HostPool, OptionsAreCheckedAndReported) {
  Program p;
  EXPECT_EQ(Load(p, 3)->intra_op_threads(), 3);
  auto two = Load(p, 2, /*spinning=*/false);
  EXPECT_EQ(two->intra_op_threads(), 2);
  EXPECT_FALSE(two->allow_spinning());
  auto by_default = Load(p, 0);
  EXPECT_EQ(by_default->intra_op_threads(),
            std::getenv("BRT_NUM_THREADS") && std::atoi(std::getenv("BRT_NUM_THREADS")) > 0
                ? std::atoi(std::getenv("BRT_NUM_THREADS"))
                : static_cast<int>(std::thread::hardware_concurrency()));
  EXPECT_TRUE(by_default->allow_spinning());
  EXPECT_EQ(by_default->linger_microseconds(), 0);
  // Lingering needs spinning and a worker besides the request's thread.
  EXPECT_EQ(Load(p, 2, true, 200)->linger_microseconds(), 200);
  EXPECT_EQ(Load(p, 2, false, 200)->linger_microseconds(), 0);
  EXPECT_EQ(Load(p, 1, true, 200)->linger_microseconds(), 0);

  auto refused = [&](auto set, const std::string& says) {
    SessionOptions bad;
    set(bad);
    ExecutableBuilder builder("host-pool-test");
    p.Build(builder);
    auto loaded = LoadBuilt(builder, bad);
    ASSERT_FALSE(loaded.ok()) << says;
    EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(loaded.status().message().find(says), std::string::npos) << loaded.status().message();
  };
  refused([](SessionOptions& o) { o.intra_op_threads = -2; }, "intra_op_threads is -2");
  refused([](SessionOptions& o) { o.linger_microseconds = -1; }, "linger_microseconds is -1");
  refused([](SessionOptions& o) { o.linger_microseconds = 1001; },
          "linger_microseconds is 1001: give 0 (off) to 1000 microseconds");
}

TEST(HostPool, ThreadsFromTheEnvironment) {
  Program p;
  const char* saved = std::getenv("BRT_NUM_THREADS");
  const std::string before = saved ? saved : "";
  setenv("BRT_NUM_THREADS", "3", 1);
  EXPECT_EQ(Load(p, 0)->intra_op_threads(), 3);
  EXPECT_EQ(Load(p, 2)->intra_op_threads(), 2);  // the option wins
  setenv("BRT_NUM_THREADS", "three", 1);
  ExecutableBuilder builder("host-pool-test");
  p.Build(builder);
  auto refused = LoadBuilt(builder, {});
  if (saved)
    setenv("BRT_NUM_THREADS", before.c_str(), 1);
  else
    unsetenv("BRT_NUM_THREADS");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("BRT_NUM_THREADS is 'three'"), std::string::npos)
      << refused.status().message();
}

TEST(HostPool, MatchesTheReferenceOnEveryThreadCount) {
  Program p;
  HostTensor x = Random(DType::kF32, {kRows, kWidth}, Rng());
  const std::vector<double> want = p.Reference(x);
  for (int threads : {1, 2, 3}) {
    auto [y, sorted] = RunOnce(*Load(p, threads), x);
    ASSERT_EQ(y.size(), want.size());
    double worst = 0;
    for (size_t i = 0; i < y.size(); ++i) worst = std::max(worst, std::abs(y[i] - want[i]));
    EXPECT_LT(worst, 1e-5) << threads << " threads";
    for (int64_t r = 0; r < kRows; ++r) {
      std::vector<float> row(y.begin() + r * kWidth, y.begin() + (r + 1) * kWidth);
      std::sort(row.begin(), row.end());
      ASSERT_TRUE(std::equal(row.begin(), row.end(), sorted.begin() + r * kWidth))
          << "row " << r << ", " << threads << " threads";
    }
  }
}

// 8 threads, each alternating between two Sessions (2 and 3 threads): every
// result bit-identical to its Session's own result on one caller.
TEST(HostPool, EightThreadsSubmitToTwoSessions) {
  Program p;
  std::shared_ptr<Session> sessions[] = {Load(p, 2), Load(p, 3)};
  std::vector<HostTensor> inputs;
  for (int i = 0; i < 6; ++i) inputs.push_back(Random(DType::kF32, {kRows, kWidth}, Rng()));
  std::vector<std::vector<float>> expected[2];
  for (int s = 0; s < 2; ++s)
    for (HostTensor& x : inputs) expected[s].push_back(RunOnce(*sessions[s], x).second);

  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> submitters;
  for (int t = 0; t < 8; ++t)
    submitters.emplace_back([&, t] {
      std::unique_ptr<RequestContext> ctx[2];
      for (int s = 0; s < 2; ++s) ctx[s] = std::move(sessions[s]->NewRequest().value());
      for (int round = 0; round < 6; ++round) {
        const int s = (t + round) % 2, i = (t * 5 + round) % 6;
        const bool async = round % 3 == 0;
        Status st = ctx[s]->Bind("x", inputs[i].view());
        if (st.ok()) st = async ? ctx[s]->RunAsync() : ctx[s]->Run();
        if (st.ok() && async) st = ctx[s]->Wait();
        if (!st.ok()) {
          ++failures;
          continue;
        }
        if (Values(ctx[s]->Output("sorted").value()) != expected[s][i]) ++mismatches;
      }
    });
  for (auto& th : submitters) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Sessions loaded, run and dropped, over and over, while another Session's
// requests keep its pool busy: nothing waits forever, results stay right.
TEST(HostPool, SessionsComeAndGoWhileAnotherRuns) {
  Program p;
  std::shared_ptr<Session> steady = Load(p, 2);
  HostTensor x = Random(DType::kF32, {kRows, kWidth}, Rng());
  const std::vector<float> want = RunOnce(*steady, x).second;
  std::atomic<bool> stop{false};
  std::atomic<int> mismatches{0}, runs{0};
  std::thread busy([&] {
    auto ctx = std::move(steady->NewRequest().value());
    while (!stop) {
      if (!ctx->Bind("x", x.view()).ok() || !ctx->Run().ok() ||
          Values(ctx->Output("sorted").value()) != want)
        ++mismatches;
      ++runs;
    }
  });
  for (int i = 0; i < 8; ++i) {
    std::shared_ptr<Session> passing = Load(p, 1 + i % 3);
    auto ctx = std::move(passing->NewRequest().value());
    ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
    ASSERT_TRUE(ctx->RunAsync().ok());
    passing.reset();  // the context keeps what it needs; the Session goes while it runs
    ASSERT_TRUE(ctx->Wait().ok());
    EXPECT_EQ(Values(ctx->Output("sorted").value()), want);
  }
  stop = true;
  busy.join();
  EXPECT_GT(runs.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// After a burst of requests and a second of rest, the process uses under 1%
// of a CPU over the next second: no worker spins on while idle, lingering
// or not.
TEST(HostPool, IdleProcessUsesNoCpu) {
  Program p;
  HostTensor x = Random(DType::kF32, {kRows, kWidth}, Rng());
  struct Case {
    bool spinning;
    int linger_us;
  };
  for (const Case c : {Case{true, 0}, Case{false, 0}, Case{true, 200}, Case{true, 1000}}) {
    std::shared_ptr<Session> s = Load(p, 0, c.spinning, c.linger_us);
    auto ctx = std::move(s->NewRequest().value());
    ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
    for (int i = 0; i < 50; ++i) ASSERT_TRUE(ctx->Run().ok());
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double before = ProcessCpuSeconds();
    const auto start = std::chrono::steady_clock::now();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double share = (ProcessCpuSeconds() - before) / wall;
    EXPECT_LT(share, 0.01) << "spinning " << c.spinning << ", linger " << c.linger_us
                           << " us: " << share * 100 << "% of a CPU";
  }
}

// Spinning after a request is bounded: oneTBB's workers look for work about
// a millisecond, and with SessionOptions::linger_microseconds brt's wait for
// the next request that long more (host_pool.cc). Over the 50 ms after each
// request the process uses a few ms of CPU at most.
TEST(HostPool, SpinningAfterARequestIsShort) {
  Program p;
  HostTensor x = Random(DType::kF32, {kRows, kWidth}, Rng());
  for (int linger_us : {0, 200})
    for (int threads : {2, 4}) {
      std::shared_ptr<Session> s = Load(p, threads, true, linger_us);
      auto ctx = std::move(s->NewRequest().value());
      ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
      constexpr int kRequests = 20;
      double after_requests = 0;
      for (int i = 0; i < kRequests; ++i) {
        ASSERT_TRUE(ctx->Run().ok());
        const double before = ProcessCpuSeconds();
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        after_requests += ProcessCpuSeconds() - before;
      }
      EXPECT_LT(after_requests / kRequests, 0.005)
          << "linger " << linger_us << " us, " << threads
          << " threads: " << after_requests / kRequests * 1e3
          << " ms of CPU in the 50 ms after a request";
    }
}

}  // namespace
}  // namespace brt::test

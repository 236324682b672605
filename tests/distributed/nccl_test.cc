// The nccl provider on one GPU (a world of one: NCCL refuses two ranks on
// one device): every collective and both overlapped matmuls around CUDA
// compute, against host references. Skips, saying why, without a GPU.
#include <atomic>
#include <thread>

#include "../unit/test_util.h"

namespace brt::test {
namespace {

const Device kGpu{DeviceKind::kCuda, 0};

// x -> negate -> <collective> -> negate: the collective runs on the nccl
// provider's stream between the cuda provider's kernels.
std::vector<float> RunOnGpu(const std::string& kind, std::vector<int64_t> in_shape,
                            std::vector<int64_t> out_shape, std::vector<Attribute> attrs,
                            const std::vector<float>& input) {
  ExecutableBuilder b;
  auto& f = b.AddFunction("main");
  auto x = f.Input("x", DType::kF32, Dims(in_shape), kGpu);
  auto a = f.Op("negate", {x}, {{DType::kF32, Dims(in_shape)}}, {}, kGpu)[0];
  auto c = f.Op(kind, {a}, {{DType::kF32, Dims(out_shape)}}, attrs, kGpu)[0];
  f.Output("y", f.Op("negate", {c}, {{DType::kF32, Dims(out_shape)}}, {}, kGpu)[0]);
  SessionOptions options;
  options.providers = {"cuda"};
  options.rank = 0;
  options.world_size = 1;
  auto session = LoadBuilt(b, options);
  if (!session.ok() && session.status().message().find("sees no cuda device") != std::string::npos)
    return {};
  EXPECT_TRUE(session.ok()) << session.status().message();
  if (!session.ok()) return {};
  std::vector<float> out(NumElements(out_shape).value_or(0));
  auto ctx = (*session)->NewRequest();
  EXPECT_TRUE(
      (*ctx)
          ->Bind("x", Tensor::Borrow(const_cast<float*>(input.data()), DType::kF32, in_shape))
          .ok());
  EXPECT_TRUE((*ctx)->Bind("y", Tensor::Borrow(out.data(), DType::kF32, out_shape)).ok());
  Status s = (*ctx)->Run();
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(Nccl, CollectivesOfAWorldOfOneOnTheGpu) {
  std::mt19937_64 rng(3);
  HostTensor x = Random(DType::kF32, {4, 6}, rng);
  std::vector<float> in(x.as<float>(), x.as<float>() + 24);
  auto out = RunOnGpu("all_reduce", {4, 6}, {4, 6}, {{"reducer", "add"}}, in);
  if (out.empty()) GTEST_SKIP() << "no usable CUDA device";
  EXPECT_EQ(out, in);
  EXPECT_EQ(RunOnGpu("all_gather", {4, 6}, {4, 6}, {{"all_gather_dim", int64_t{0}}}, in), in);
  EXPECT_EQ(RunOnGpu("reduce_scatter", {4, 6}, {4, 6},
                     {{"scatter_dimension", int64_t{0}}, {"reducer", "max"}}, in),
            in);
  EXPECT_EQ(RunOnGpu("all_to_all", {4, 6}, {4, 6},
                     {{"split_dimension", int64_t{0}},
                      {"concat_dimension", int64_t{0}},
                      {"split_count", int64_t{1}}},
                     in),
            in);
  EXPECT_EQ(RunOnGpu("collective_permute", {4, 6}, {4, 6},
                     {{"source_target_pairs", std::vector<int64_t>{0, 0}}}, in),
            in);
  // No pair sends to rank 0: zeros (negated twice).
  EXPECT_EQ(RunOnGpu("collective_permute", {4, 6}, {4, 6},
                     {{"source_target_pairs", std::vector<int64_t>{}}}, in),
            std::vector<float>(24, 0.0f));
}

// A world of one runs the overlapped ops' whole path (the GEMM stream forked
// from the op's stream and joined back) with no chunk to move: the result is
// lhs x rhs, checked in float64, with rhs given [K, N] or [N, K].
TEST(Nccl, OverlappedMatmulsOfAWorldOfOneOnTheGpu) {
  const int64_t rows = 48, k = 40, n = 24;
  for (DType t : {DType::kF32, DType::kBF16}) {
    for (bool rhs_transposed : {false, true}) {
      for (const char* kind : {"brt.all_gather_matmul", "brt.matmul_reduce_scatter"}) {
        SCOPED_TRACE(std::string(kind) + " " + DTypeName(t) +
                     (rhs_transposed ? " rhs [N, K]" : " rhs [K, N]"));
        std::mt19937_64 rng(11);
        HostTensor lhs = Random(t, {2, rows / 2, k}, rng);
        const std::vector<int64_t> rhs_shape =
            rhs_transposed ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
        HostTensor rhs = Random(t, rhs_shape, rng);
        const bool gather = std::string(kind) == "brt.all_gather_matmul";
        ExecutableBuilder b;
        auto& f = b.AddFunction("main");
        auto x = f.Input("x", t, Dims(lhs.shape), kGpu);
        auto w = f.Input("w", t, Dims(rhs_shape), kGpu);
        const std::vector<int64_t> out_shape = {2, rows / 2, n};
        f.Output(
            "y",
            f.Op(kind, {x, w}, {{t, Dims(out_shape)}},
                 {{gather ? "all_gather_dim" : "scatter_dimension", int64_t{0}},
                  {"lhs_contracting_dimensions", std::vector<int64_t>{2}},
                  {"rhs_contracting_dimensions", std::vector<int64_t>{rhs_transposed ? 1 : 0}}},
                 kGpu)[0]);
        SessionOptions options;
        options.providers = {"cuda"};
        options.rank = 0;
        options.world_size = 1;
        auto session = LoadBuilt(b, options);
        if (!session.ok() &&
            session.status().message().find("sees no cuda device") != std::string::npos)
          GTEST_SKIP() << "no usable CUDA device";
        ASSERT_TRUE(session.ok()) << session.status().message();
        HostTensor out(t, out_shape);
        auto ctx = (*session)->NewRequest();
        ASSERT_TRUE((*ctx)->Bind("x", lhs.view()).ok());
        ASSERT_TRUE((*ctx)->Bind("w", rhs.view()).ok());
        ASSERT_TRUE((*ctx)->Bind("y", out.view()).ok());
        for (int run = 0; run < 2; ++run) {  // the second reuses the context's streams
          Status s = (*ctx)->Run();
          ASSERT_TRUE(s.ok()) << s.message();
          std::vector<double> ref(rows * n, 0.0);
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < n; ++j)
              for (int64_t c = 0; c < k; ++c)
                ref[i * n + j] +=
                    lhs.Get(i * k + c) * rhs.Get(rhs_transposed ? j * k + c : c * n + j);
          EXPECT_LE(RelError(out.ToDouble(), ref), t == DType::kF32 ? 1e-5 : 1e-2);
        }
      }
    }
  }
}

// Request contexts of one Session share its communicator; NCCL takes one
// thread at a time on it (the provider's per-communicator lock, kernels.h).
// Four threads, each its own context, run a chain of grouped and plain
// collectives over and over, every result checked.
TEST(Nccl, ConcurrentRequestContextsShareTheCommunicator) {
  const std::vector<int64_t> shape = {4, 64};
  ExecutableBuilder b;
  auto& f = b.AddFunction("main");
  auto v = f.Input("x", DType::kF32, Dims(shape), kGpu);
  v = f.Op("all_to_all", {v}, {{DType::kF32, Dims(shape)}},
           {{"split_dimension", int64_t{0}},
            {"concat_dimension", int64_t{0}},
            {"split_count", int64_t{1}}},
           kGpu)[0];
  v = f.Op("collective_permute", {v}, {{DType::kF32, Dims(shape)}},
           {{"source_target_pairs", std::vector<int64_t>{0, 0}}}, kGpu)[0];
  v = f.Op("all_reduce", {v}, {{DType::kF32, Dims(shape)}}, {{"reducer", "add"}}, kGpu)[0];
  f.Output("y", f.Op("negate", {v}, {{DType::kF32, Dims(shape)}}, {}, kGpu)[0]);
  SessionOptions options;
  options.providers = {"cuda"};
  options.rank = 0;
  options.world_size = 1;
  auto session = LoadBuilt(b, options);
  if (!session.ok() && session.status().message().find("sees no cuda device") != std::string::npos)
    GTEST_SKIP() << "no usable CUDA device";
  ASSERT_TRUE(session.ok()) << session.status().message();
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      auto ctx = (*session)->NewRequest();
      if (!ctx.ok()) return void(++failed);
      std::vector<float> in(256), out(256);
      for (int run = 0; run < 200; ++run) {
        for (int i = 0; i < 256; ++i) in[i] = static_cast<float>(t * 100000 + run * 256 + i);
        if (!(*ctx)->Bind("x", Tensor::Borrow(in.data(), DType::kF32, shape)).ok() ||
            !(*ctx)->Bind("y", Tensor::Borrow(out.data(), DType::kF32, shape)).ok() ||
            !(*ctx)->Run().ok())
          return void(++failed);
        for (int i = 0; i < 256; ++i)
          if (out[i] != -in[i]) return void(++wrong);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace brt::test

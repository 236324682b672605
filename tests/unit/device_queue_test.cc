// The core's device-queue logic against a stand-in device provider
// (plugins/queued_device_plugin.cc, whose queues defer work until
// synchronize): host<->device staging of bindings, device weights, graph
// capture, replay and re-capture, the fallback for an op that cannot be
// captured, a caller-supplied queue, ops on several streams, and ops of a
// second provider of the device (plugins/queued_peer_plugin.cc).
#include <dlfcn.h>

#include <mutex>

#include "test_util.h"

namespace brt::test {
namespace {

const Device kDev{DeviceKind::kCuda, 0};

struct Plugin {
  void* handle = dlopen(BRT_TEST_QUEUED_DEVICE_PLUGIN, RTLD_NOW);
  std::vector<int> Counters() {
    std::vector<int> c(8);
    reinterpret_cast<void (*)(int*)>(dlsym(handle, "queued_device_counters"))(c.data());
    return c;
  }
  void* Alloc(size_t n) {
    return reinterpret_cast<void* (*)(size_t)>(dlsym(handle, "queued_device_alloc"))(n);
  }
  void Free(void* p) { reinterpret_cast<void (*)(void*)>(dlsym(handle, "queued_device_free"))(p); }
  void WriteOnNative(void* native, void* dst, const void* src, size_t bytes) {
    reinterpret_cast<void (*)(void*, void*, const void*, size_t)>(
        dlsym(handle, "queued_device_write_on_native"))(native, dst, src, bytes);
  }
};
enum {
  kCaptures,
  kLaunches,
  kKernelRuns,
  kCopies,
  kNativeQueueOps,
  kEventsRecorded,
  kEventsWaited,
  kPinnedAllocations
};

// y = -x + w, on the device; w is a weight in the executable.
std::shared_ptr<Session> Load(const HostTensor& w, bool with_exponential = false,
                              SessionOptions o = {}) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {6}, kDev);
  ValueId wv =
      f.Weight("w", DType::kF32, {6}, {static_cast<const uint8_t*>(w.data()), w.num_bytes()}, kDev);
  ValueId h = f.Op("negate", {x}, {{DType::kF32, {6}}}, {}, kDev)[0];
  if (with_exponential) h = f.Op("exponential", {h}, {{DType::kF32, {6}}}, {}, kDev)[0];
  f.Output("y", f.Op("add", {h, wv}, {{DType::kF32, {6}}}, {}, kDev)[0]);
  o.providers = {BRT_TEST_QUEUED_DEVICE_PLUGIN};
  auto s = LoadBuilt(b, o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

std::vector<double> Expected(const HostTensor& x, const HostTensor& w, bool exponential = false) {
  std::vector<double> y;
  for (int i = 0; i < 6; ++i)
    y.push_back((exponential ? std::exp(-x.Get(i)) : -x.Get(i)) + w.Get(i));
  return y;
}

TEST(DeviceQueue, HostBindingsAreStagedAndGraphsReplay) {
  Plugin plugin;
  HostTensor w = Random(DType::kF32, {6}, Rng()), x = Random(DType::kF32, {6}, Rng());
  auto session = Load(w);
  ASSERT_TRUE(session);
  auto ctx = std::move(session->NewRequest().value());
  HostTensor y(DType::kF32, {6});
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  ASSERT_TRUE(ctx->Bind("y", y.view()).ok());
  const std::vector<int> start = plugin.Counters();
  // The first run goes op by op (module loading and the libraries' first
  // calls must not happen inside a capture); nothing is recorded yet.
  ASSERT_TRUE(ctx->Run().ok());
  EXPECT_LE(RelError(y.ToDouble(), Expected(x, w)), 1e-7);
  EXPECT_FALSE(ctx->last_run_replayed_graph());
  EXPECT_EQ(plugin.Counters()[kCaptures], start[kCaptures]);
  EXPECT_EQ(plugin.Counters()[kKernelRuns] - start[kKernelRuns], 2);
  // The second records and replays.
  std::memset(y.data(), 0, y.num_bytes());
  ASSERT_TRUE(ctx->Run().ok());
  EXPECT_LE(RelError(y.ToDouble(), Expected(x, w)), 1e-7);
  EXPECT_TRUE(ctx->last_run_replayed_graph());
  // New host data through the same staging buffers: replay, no re-capture.
  HostTensor x2 = Random(DType::kF32, {6}, Rng());
  ASSERT_TRUE(ctx->Bind("x", x2.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  EXPECT_LE(RelError(y.ToDouble(), Expected(x2, w)), 1e-7);
  std::vector<int> c = plugin.Counters();
  EXPECT_EQ(c[kCaptures] - start[kCaptures], 1);
  EXPECT_EQ(c[kLaunches] - start[kLaunches], 2);
  EXPECT_EQ(c[kKernelRuns] - start[kKernelRuns], 6);
  EXPECT_EQ(c[kCopies] - start[kCopies], 6);  // per run: x in, y out
  // Both go through page-locked bounce buffers, made once and reused; the
  // stand-in reads and writes those in queue order, so y is only right when
  // the core copies out after the queue is done.
  EXPECT_EQ(c[kPinnedAllocations] - start[kPinnedAllocations], 2);

  // Graphs off: the same results op by op.
  ctx->SetGraphCapture(false);
  ASSERT_TRUE(ctx->Run().ok());
  EXPECT_FALSE(ctx->last_run_replayed_graph());
  EXPECT_LE(RelError(y.ToDouble(), Expected(x2, w)), 1e-7);
  EXPECT_EQ(plugin.Counters()[kLaunches], c[kLaunches]);
}

TEST(DeviceQueue, NewDeviceAddressesAreRecaptured) {
  Plugin plugin;
  HostTensor w = Random(DType::kF32, {6}, Rng()), x = Random(DType::kF32, {6}, Rng());
  auto session = Load(w);
  ASSERT_TRUE(session);
  auto ctx = std::move(session->NewRequest().value());
  void* a = plugin.Alloc(24);
  void* b = plugin.Alloc(24);
  const std::vector<int> start = plugin.Counters();
  for (void* p : {a, b, a}) {
    ASSERT_TRUE(ctx->Bind("x", Tensor::Borrow(p, DType::kF32, {6}, kDev)).ok());
    ASSERT_TRUE(ctx->Run().ok());
  }
  // a (the first run: op by op), then b (capture), then a again (new
  // address: re-capture).
  EXPECT_EQ(plugin.Counters()[kCaptures] - start[kCaptures], 2);
  // The runtime-allocated output lives on the device.
  auto out = ctx->Output("y");
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->device(), kDev);
  plugin.Free(a);
  plugin.Free(b);
}

TEST(DeviceQueue, AnOpThatCannotBeCapturedRunsOpByOp) {
  Plugin plugin;
  HostTensor w = Random(DType::kF32, {6}, Rng()), x = Random(DType::kF32, {6}, Rng());
  auto session = Load(w, /*with_exponential=*/true);
  ASSERT_TRUE(session);
  auto ctx = std::move(session->NewRequest().value());
  HostTensor y(DType::kF32, {6});
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  ASSERT_TRUE(ctx->Bind("y", y.view()).ok());
  const int captures = plugin.Counters()[kCaptures];
  testing::internal::CaptureStderr();
  const Status first = ctx->Run(), second = ctx->Run();
  const std::string said = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(first.ok() && second.ok()) << first.ToString() << second.ToString();
  EXPECT_FALSE(ctx->last_run_replayed_graph());
  EXPECT_EQ(plugin.Counters()[kCaptures], captures);
  EXPECT_LE(RelError(y.ToDouble(), Expected(x, w, true)), 1e-6);
  // Said once, naming the op.
  EXPECT_NE(said.find("op #1 'exponential' cannot be recorded"), std::string::npos) << said;
  EXPECT_EQ(said.find("runs op by op"), said.rfind("runs op by op")) << said;
  // Another request on the Session meets the same case: stderr already has it.
  auto other = std::move(session->NewRequest().value());
  ASSERT_TRUE(other->Bind("x", x.view()).ok());
  testing::internal::CaptureStderr();
  ASSERT_TRUE(other->Run().ok());
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
}

// With SessionOptions::log set, that warning goes to the callback, at warning
// level and once per context, and nothing goes to stderr.
TEST(DeviceQueue, TheOpByOpWarningGoesToTheLogCallback) {
  std::mutex mu;
  std::vector<std::pair<LogLevel, std::string>> logged;
  SessionOptions options;
  options.log = [&](LogLevel level, std::string_view message) {
    std::lock_guard<std::mutex> lock(mu);
    logged.emplace_back(level, message);
  };
  HostTensor w = Random(DType::kF32, {6}, Rng()), x = Random(DType::kF32, {6}, Rng());
  auto session = Load(w, /*with_exponential=*/true, options);
  ASSERT_TRUE(session);
  auto ctx = std::move(session->NewRequest().value());
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  testing::internal::CaptureStderr();
  const Status first = ctx->Run(), second = ctx->Run();
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_TRUE(first.ok() && second.ok()) << first.ToString() << second.ToString();
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0].first, LogLevel::kWarning);
  EXPECT_EQ(logged[0].second,
            "function 'main' runs op by op, not as a graph: op #1 'exponential' cannot be "
            "recorded into a graph");
}

// x lives on the device and the caller writes it with work of its own on
// the default queue (handle nullptr, like PyTorch's stream 0). The context
// runs on that queue, so its kernels come after the write; on a queue of its
// own they would run first and read the poison.
TEST(DeviceQueue, CallerQueueIsUsedAndErrorsAreClear) {
  Plugin plugin;
  HostTensor w = Random(DType::kF32, {6}, Rng()), x = Random(DType::kF32, {6}, Rng());
  auto session = Load(w);
  ASSERT_TRUE(session);
  auto ctx = std::move(session->NewRequest().value());
  ASSERT_TRUE(ctx->SetQueue(kDev, nullptr).ok());
  ctx->SetGraphCapture(false);
  void* x_device = plugin.Alloc(x.num_bytes());
  const std::vector<float> poison(6, NAN);
  std::memcpy(x_device, poison.data(), x.num_bytes());
  plugin.WriteOnNative(nullptr, x_device, x.data(), x.num_bytes());
  HostTensor y(DType::kF32, {6});
  ASSERT_TRUE(ctx->Bind("x", Tensor::Borrow(x_device, DType::kF32, {6}, kDev)).ok());
  ASSERT_TRUE(ctx->Bind("y", y.view()).ok());
  const int before = plugin.Counters()[kNativeQueueOps];
  ASSERT_TRUE(ctx->Run().ok());
  EXPECT_LE(RelError(y.ToDouble(), Expected(x, w)), 1e-7);
  EXPECT_EQ(plugin.Counters()[kNativeQueueOps] - before, 3);  // 2 kernels, copy out
  // Back to a queue of its own: nothing more on the caller's.
  ASSERT_TRUE(ctx->UseOwnQueue(kDev).ok());
  ASSERT_TRUE(ctx->Run().ok());
  EXPECT_EQ(plugin.Counters()[kNativeQueueOps] - before, 3);
  EXPECT_LE(RelError(y.ToDouble(), Expected(x, w)), 1e-7);
  ExpectError(ctx->SetQueue(Device{DeviceKind::kCpu, 0}, nullptr),
              {"no loaded provider runs work queues on cpu"});
  HostTensor wrong_dtype(DType::kI32, {6});
  ExpectError(ctx->Bind("x", wrong_dtype.view()), {"'x'", "expected dtype f32, got i32"});
  plugin.Free(x_device);
}

// a = -x on stream 1, c = a + y on stream 0, d = -c on stream 1, e = -y on
// stream 2. The stand-in runs each queue only when synchronized or waited
// for, so a missing event leaves poisoned or stale results.
TEST(DeviceQueue, StreamsAreOrderedByEventsWhereOpsDepend) {
  Plugin plugin;
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {6}, kDev), y = f.Input("y", DType::kF32, {6}, kDev);
  const TensorType t{DType::kF32, {6}};
  ValueId a = f.Op("negate", {x}, {t}, {}, kDev, 1)[0];
  ValueId c = f.Op("add", {a, y}, {t}, {}, kDev, 0)[0];
  ValueId d = f.Op("negate", {c}, {t}, {}, kDev, 1)[0];
  ValueId e = f.Op("negate", {y}, {t}, {}, kDev, 2)[0];
  f.Output("c", c);
  f.Output("d", d);
  f.Output("e", e);
  SessionOptions o;
  o.providers = {BRT_TEST_QUEUED_DEVICE_PLUGIN};
  auto session = LoadBuilt(b, o);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest().value());
  for (int run = 0; run < 2; ++run) {
    HostTensor xs = Random(DType::kF32, {6}, Rng()), ys = Random(DType::kF32, {6}, Rng());
    HostTensor cs(DType::kF32, {6}), ds(DType::kF32, {6}), es(DType::kF32, {6});
    for (HostTensor* out : {&cs, &ds, &es})
      for (int i = 0; i < 6; ++i) out->as<float>()[i] = NAN;
    ASSERT_TRUE(ctx->Bind("x", xs.view()).ok());
    ASSERT_TRUE(ctx->Bind("y", ys.view()).ok());
    ASSERT_TRUE(ctx->Bind("c", cs.view()).ok());
    ASSERT_TRUE(ctx->Bind("d", ds.view()).ok());
    ASSERT_TRUE(ctx->Bind("e", es.view()).ok());
    const std::vector<int> before = plugin.Counters();
    ASSERT_TRUE(ctx->Run().ok());
    const std::vector<int> after = plugin.Counters();
    for (int i = 0; i < 6; ++i) {
      const float expect_c = -xs.as<float>()[i] + ys.as<float>()[i];
      EXPECT_EQ(cs.as<float>()[i], expect_c) << "run " << run << " element " << i;
      EXPECT_EQ(ds.as<float>()[i], -expect_c) << "run " << run << " element " << i;
      EXPECT_EQ(es.as<float>()[i], -ys.as<float>()[i]) << "run " << run << " element " << i;
    }
    // Events: after a (waited by c) and c (waited by d), plus one each way
    // between stream 0 and streams 1 and 2 for the staged inputs and outputs.
    // e depends on nothing on another stream and adds none.
    EXPECT_EQ(after[kEventsRecorded] - before[kEventsRecorded], 6);
    EXPECT_EQ(after[kEventsWaited] - before[kEventsWaited], 6);
  }
  EXPECT_FALSE(ctx->last_run_replayed_graph());
}

// The first and last device ops of a function run on another provider of the
// device, with queues of its own (as a collective runs on the nccl provider's
// streams while bindings are staged through the cuda provider's queue): the
// staged input must be in before that op reads it, and its result complete
// before the copy back reads it. The stand-ins' queues are ordered only by
// the host waiting. "alone": y = peer_scale(x), an op alone in a function
// (the nccl test's overlapped matmul); "chain": y = peer_scale(-peer_scale(x)),
// an op of the copying provider between.
TEST(DeviceQueue, CopiesWaitForAnotherProvidersQueue) {
  ExecutableBuilder b;
  const TensorType t{DType::kF32, {6}};
  {
    FunctionBuilder& f = b.AddFunction("alone");
    ValueId x = f.Input("x", DType::kF32, {6}, kDev);
    f.Output("y", f.Op("test.peer_scale", {x}, {t}, {}, kDev)[0]);
  }
  {
    FunctionBuilder& f = b.AddFunction("chain");
    ValueId x = f.Input("x", DType::kF32, {6}, kDev);
    ValueId a = f.Op("test.peer_scale", {x}, {t}, {}, kDev)[0];
    ValueId c = f.Op("negate", {a}, {t}, {}, kDev)[0];
    f.Output("y", f.Op("test.peer_scale", {c}, {t}, {}, kDev)[0]);
  }
  SessionOptions o;
  o.providers = {BRT_TEST_QUEUED_DEVICE_PLUGIN, BRT_TEST_QUEUED_PEER_PLUGIN};
  auto session = LoadBuilt(b, o);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  for (const auto& [fn, factor] :
       {std::pair<const char*, float>{"alone", 2.0f}, {"chain", -4.0f}}) {
    auto ctx = std::move((*session)->NewRequest(fn).value());
    for (int run = 0; run < 3; ++run) {
      HostTensor xs = Random(DType::kF32, {6}, Rng()), ys(DType::kF32, {6});
      for (int i = 0; i < 6; ++i) ys.as<float>()[i] = NAN;
      ASSERT_TRUE(ctx->Bind("x", xs.view()).ok());
      ASSERT_TRUE(ctx->Bind("y", ys.view()).ok());
      const Status ran = ctx->Run();
      ASSERT_TRUE(ran.ok()) << ran.ToString();
      for (int i = 0; i < 6; ++i)
        EXPECT_EQ(ys.as<float>()[i], factor * xs.as<float>()[i])
            << fn << " run " << run << " element " << i;
    }
  }
}

TEST(DeviceQueue, StreamOutsideTheFormatsRangeIsRejected) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {6}, kDev);
  f.Output("y", f.Op("negate", {x}, {{DType::kF32, {6}}}, {}, kDev, 256)[0]);
  auto bytes = b.Serialize();
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("stream 256 is outside [0, 255]"), std::string::npos)
      << bytes.status().ToString();
}

}  // namespace
}  // namespace brt::test

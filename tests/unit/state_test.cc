// Train state: state bound once and updated in place over several runs,
// read back, saved to and loaded from .safetensors; and the .safetensors
// reader against hand-made and corrupted files. With BRT_TEST_DEVICE=cuda
// the state lives on the CUDA device (uploaded from the host, read back).
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "brt/safetensors.h"
#include "test_util.h"

namespace brt::test {
namespace {

// The files TempPath named, removed when the tests end.
class RemoveTempFiles : public ::testing::Environment {
 public:
  static std::vector<std::string>& Paths() {
    static std::vector<std::string> paths;
    return paths;
  }
  void TearDown() override {
    for (const std::string& p : Paths()) std::remove(p.c_str());
  }
};
::testing::Environment* const kRemoveTempFiles =
    ::testing::AddGlobalTestEnvironment(new RemoveTempFiles);

// Per process: the CPU and CUDA runs of this binary may run at once, and a
// file truncated under another's mapping would kill it with SIGBUS.
std::string TempPath(const std::string& name) {
  std::string path = ::testing::TempDir() + "/" + std::to_string(::getpid()) + "_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
  RemoveTempFiles::Paths().push_back(path);
  return path;
}

// w <- w - 0.5 * g and v <- 0.9 * v + g, both in place; loss = sum(w * w)
// (of the old w) as a plain output.
std::shared_ptr<Session> SgdStep(int64_t n) {
  ExecutableBuilder b("state_test");
  FunctionBuilder& f = b.AddFunction("step");
  const Device d = TestDevice();
  auto w = f.State("params.w", DType::kF32, {n}, d);
  auto v = f.State("opt.v", DType::kF32, {n}, d);
  auto g = f.Input("g", DType::kF32, {n}, d);
  auto half = f.Op("constant", {}, {{DType::kF32, {}}},
                   {{"value", std::vector<uint8_t>{0, 0, 0, 63}}}, d)[0];
  auto nine = f.Op("constant", {}, {{DType::kF32, {}}},
                   {{"value", std::vector<uint8_t>{0x66, 0x66, 0x66, 0x3f}}}, d)[0];
  auto bcast = [&](ValueId s) {
    return f.Op("broadcast_in_dim", {s}, {{DType::kF32, {n}}},
                {{"broadcast_dimensions", std::vector<int64_t>{}}}, d)[0];
  };
  auto sq = f.Op("multiply", {w, w}, {{DType::kF32, {n}}}, {}, d)[0];
  auto loss =
      f.Op("reduce",
           {sq, f.Op("constant", {}, {{DType::kF32, {}}},
                     {{"value", std::vector<uint8_t>{0, 0, 0, 0}}}, d)[0]},
           {{DType::kF32, {}}},
           {{"dimensions", std::vector<int64_t>{0}}, {"reducer", std::string("add")}}, d)[0];
  auto new_v = f.Op("add", {f.Op("multiply", {bcast(nine), v}, {{DType::kF32, {n}}}, {}, d)[0], g},
                    {{DType::kF32, {n}}}, {}, d)[0];
  auto new_w =
      f.Op("subtract", {w, f.Op("multiply", {bcast(half), g}, {{DType::kF32, {n}}}, {}, d)[0]},
           {{DType::kF32, {n}}}, {}, d)[0];
  f.Output("new_w", new_w, "params.w");
  f.Output("new_v", new_v, "opt.v");
  f.Output("loss", loss);
  auto s = LoadBuilt(b, TestOptions());
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : nullptr;
}

std::vector<double> Read(RequestContext& ctx, const std::string& name) {
  auto t = ctx.State(name);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  if (!t.ok()) return {};
  HostTensor host(DType::kF32, t->shape());
  if (t->device().kind == DeviceKind::kCpu) {
    std::memcpy(host.data(), t->data(), host.num_bytes());
  } else {
    const std::string path = TempPath("read.safetensors");
    EXPECT_TRUE(ctx.SaveState(path).ok());
    auto file = ReadSafetensors(path);
    EXPECT_TRUE(file.ok()) << file.status().ToString();
    for (const NamedTensor& nt : file->tensors)
      if (nt.name == name) std::memcpy(host.data(), nt.tensor.data(), host.num_bytes());
  }
  return host.ToDouble();
}

TEST(TrainState, BoundOnceUpdatedInPlaceSavedAndLoaded) {
  const int64_t n = 37;
  auto session = SgdStep(n);
  ASSERT_TRUE(session);
  auto ctx = std::move(session->NewRequest()).value();
  HostTensor w = Random(DType::kF32, {n}, Rng()), v = Random(DType::kF32, {n}, Rng());
  std::vector<HostTensor> grads;
  for (int i = 0; i < 6; ++i) grads.push_back(Random(DType::kF32, {n}, Rng()));

  // The reference, in float64: six steps.
  std::vector<double> rw = w.ToDouble(), rv = v.ToDouble(), losses;
  auto reference_step = [&](const HostTensor& g) {
    double loss = 0;
    for (int64_t k = 0; k < n; ++k) {
      loss += rw[k] * rw[k];
      rv[k] = 0.9 * rv[k] + g.Get(k);
      rw[k] -= 0.5 * g.Get(k);
    }
    losses.push_back(loss);
  };

  ASSERT_TRUE(ctx->Bind("params.w", w.view(), Ownership::kCopied).ok());
  ASSERT_TRUE(ctx->Bind("opt.v", v.view(), Ownership::kCopied).ok());
  w.Set(0, 1e6);  // the context holds its own copy
  auto bound = ctx->State("params.w");
  ASSERT_TRUE(bound.ok());
  EXPECT_EQ(bound->device(), TestDevice());
  const void* buffer = bound->data();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(ctx->Bind("g", grads[i].view()).ok());
    ASSERT_TRUE(ctx->Run().ok());
    reference_step(grads[i]);
    auto loss = ctx->Output("loss");
    ASSERT_TRUE(loss.ok());
    if (loss->device().kind == DeviceKind::kCpu)
      EXPECT_NEAR(*loss->data_as<float>(), losses.back(), 1e-5 * losses.back());
  }
  EXPECT_EQ(ctx->State("params.w")->data(), buffer) << "the state moved";
  EXPECT_LE(RelError(Read(*ctx, "params.w"), rw), 1e-6);
  EXPECT_LE(RelError(Read(*ctx, "opt.v"), rv), 1e-6);

  // Saved, then loaded into a fresh context: three more steps on each agree.
  const std::string path = TempPath("state.safetensors");
  ASSERT_TRUE(ctx->SaveState(path).ok());
  auto file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->tensors.size(), 2u);
  EXPECT_EQ(file->metadata["function"], "step");
  auto resumed = std::move(session->NewRequest()).value();
  ASSERT_TRUE(resumed->LoadState(path).ok());
  for (int i = 3; i < 6; ++i) {
    for (RequestContext* c : {ctx.get(), resumed.get()}) {
      ASSERT_TRUE(c->Bind("g", grads[i].view()).ok());
      ASSERT_TRUE(c->Run().ok());
    }
    reference_step(grads[i]);
  }
  EXPECT_LE(RelError(Read(*resumed, "params.w"), rw), 1e-6);
  EXPECT_LE(RelError(Read(*resumed, "opt.v"), rv), 1e-6);
  EXPECT_EQ(Read(*resumed, "params.w"), Read(*ctx, "params.w"));
}

// A cache kept as state, one row written per run by dynamic_update_slice
// straight into the state's buffer; then exp, tanh over exp's result and
// cache - tanh over tanh's (the memory planner's in-place results, on the
// device's arena); loss = the sum, copied to the host. Every run against
// float64.
TEST(TrainState, CacheRowsWrittenInPlaceAndResultsOverDeadOperands) {
  const int64_t rows = 24, cols = 32;
  ExecutableBuilder b("state_test");
  FunctionBuilder& f = b.AddFunction("decode");
  const Device d = TestDevice();
  const TensorType value{DType::kF32, {rows, cols}};
  auto cache = f.State("cache", DType::kF32, {rows, cols}, d);
  auto row = f.Input("row", DType::kF32, {1, cols}, d);
  auto pos = f.Input("pos", DType::kI32, {}, d);
  auto zero = f.Op("constant", {}, {{DType::kI32, {}}},
                   {{"value", std::vector<uint8_t>{0, 0, 0, 0}}}, d)[0];
  auto updated = f.Op("dynamic_update_slice", {cache, row, pos, zero}, {value}, {}, d)[0];
  auto e = f.Op("exponential", {updated}, {value}, {}, d)[0];
  auto t = f.Op("tanh", {e}, {value}, {}, d)[0];
  auto diff = f.Op("subtract", {updated, t}, {value}, {}, d)[0];
  auto loss =
      f.Op("reduce",
           {diff, f.Op("constant", {}, {{DType::kF32, {}}},
                       {{"value", std::vector<uint8_t>{0, 0, 0, 0}}}, d)[0]},
           {{DType::kF32, {}}},
           {{"dimensions", std::vector<int64_t>{0, 1}}, {"reducer", std::string("add")}}, d)[0];
  f.Output("new_cache", updated, "cache");
  f.Output("loss", d.kind == DeviceKind::kCpu ? loss : f.Copy(loss, Device{}));
  BuildReport report;
  ASSERT_TRUE(b.Serialize(&report).ok());
  EXPECT_EQ(report.functions.at(0).shared_results, 2);  // tanh over exp, subtract over tanh
  auto session = LoadBuilt(b, TestOptions());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest()).value();
  HostTensor start = Random(DType::kF32, {rows, cols}, Rng());
  ASSERT_TRUE(ctx->Bind("cache", start.view(), Ownership::kCopied).ok());
  const void* buffer = ctx->State("cache")->data();
  std::vector<double> ref = start.ToDouble();
  for (int32_t p : {3, 0, 23, 3, 40}) {  // 40 clamps to the last row
    HostTensor r = Random(DType::kF32, {1, cols}, Rng());
    HostTensor at = HostTensor::FromDouble(DType::kI32, {}, {static_cast<double>(p)});
    ASSERT_TRUE(ctx->Bind("row", r.view()).ok());
    ASSERT_TRUE(ctx->Bind("pos", at.view()).ok());
    ASSERT_TRUE(ctx->Run().ok());
    const int64_t written = std::min<int64_t>(p, rows - 1);
    for (int64_t c = 0; c < cols; ++c) ref[written * cols + c] = r.Get(c);
    double want = 0;
    for (double x : ref) want += x - std::tanh(std::exp(x));
    auto got = ctx->Output("loss");
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_NEAR(*got->data_as<float>(), want, 1e-5 * std::abs(want) + 1e-4) << "pos " << p;
  }
  EXPECT_EQ(ctx->State("cache")->data(), buffer) << "the state moved";
  EXPECT_LE(RelError(Read(*ctx, "cache"), ref), 1e-7);
}

TEST(TrainState, LoadStateRefusesAFileThatDoesNotFitAndKeepsTheState) {
  auto session = SgdStep(8);
  ASSERT_TRUE(session);
  auto ctx = std::move(session->NewRequest()).value();
  HostTensor w = Random(DType::kF32, {8}, Rng()), v = Random(DType::kF32, {8}, Rng());
  ASSERT_TRUE(ctx->Bind("params.w", w.view(), Ownership::kCopied).ok());
  ASSERT_TRUE(ctx->Bind("opt.v", v.view(), Ownership::kCopied).ok());
  const std::vector<double> before = Read(*ctx, "params.w");

  HostTensor other(DType::kF32, {8}), wrong_shape = Random(DType::kF32, {9}, Rng());
  const std::string missing = TempPath("missing.safetensors");
  ASSERT_TRUE(
      WriteSafetensors(missing, {{"params.w", wrong_shape.view()}, {"extra", other.view()}}).ok());
  ExpectError(ctx->LoadState(missing), {"missing: opt.v", "not state here: extra"});
  const std::string shaped = TempPath("shape.safetensors");
  ASSERT_TRUE(
      WriteSafetensors(shaped, {{"params.w", wrong_shape.view()}, {"opt.v", other.view()}}).ok());
  ExpectError(ctx->LoadState(shaped), {"params.w", "expected shape [8], got [9]"});
  ExpectError(ctx->LoadState(TempPath("absent.safetensors")), {"cannot open"});
  EXPECT_EQ(Read(*ctx, "params.w"), before);
  ExpectError(ctx->State("g").status(), {"'g'", "input, not state"});
}

// An output the runtime allocates lives on the function's device; a host
// reader (brt-run writing .npy) must take it through OutputOnHost, which
// copies it from a GPU.
TEST(Outputs, OutputOnHostCopiesADeviceOutputToTheHost) {
  ExecutableBuilder b("brt-unit-test");
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {6}, TestDevice());
  f.Output("y", f.Op("negate", {x}, {{DType::kF32, {6}}}, {}, TestDevice())[0]);
  auto session = LoadBuilt(b, TestOptions());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto ctx = std::move((*session)->NewRequest()).value();
  HostTensor in = Random(DType::kF32, {6}, Rng());
  ASSERT_TRUE(ctx->Bind("x", in.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  auto on_device = ctx->Output("y");
  ASSERT_TRUE(on_device.ok());
  EXPECT_EQ(on_device->device(), TestDevice());
  auto host = ctx->OutputOnHost("y");
  ASSERT_TRUE(host.ok()) << host.status().ToString();
  EXPECT_EQ(host->device().kind, DeviceKind::kCpu);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(host->data_as<float>()[i], -in.as<float>()[i]);
  ExpectError(ctx->OutputOnHost("x").status(), {"'x'", "not an output"});
}

TEST(Safetensors, EveryElementTypeRoundTrips) {
  std::vector<NamedTensor> tensors;
  std::vector<HostTensor> keep;
  for (int code = 1; code < kNumDTypes; ++code) {  // every dtype: the codes have no gaps
    const DType t = static_cast<DType>(code);
    if (t == DType::kC128) continue;  // safetensors has no C128: refused below
    keep.push_back(Random(t, {3, 5}, Rng(), 0, 100));
    tensors.push_back({std::string("t_") + DTypeName(t), keep.back().view()});
  }
  keep.push_back(Random(DType::kF32, {}, Rng()));
  tensors.push_back({"scalar \"quoted\" \xc3\xa9", keep.back().view()});
  keep.emplace_back(DType::kF32, std::vector<int64_t>{0, 4});
  tensors.push_back({"empty", keep.back().view()});
  const std::string path = TempPath("all.safetensors");
  ASSERT_TRUE(WriteSafetensors(path, tensors, {{"note", "line\nbreak"}}).ok());
  auto file = ReadSafetensors(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->metadata["note"], "line\nbreak");
  ASSERT_EQ(file->tensors.size(), tensors.size());
  for (const NamedTensor& want : tensors) {
    auto got = std::find_if(file->tensors.begin(), file->tensors.end(),
                            [&](const NamedTensor& t) { return t.name == want.name; });
    ASSERT_NE(got, file->tensors.end()) << want.name;
    EXPECT_EQ(got->tensor.dtype(), want.tensor.dtype()) << want.name;
    EXPECT_EQ(got->tensor.shape(), want.tensor.shape()) << want.name;
    EXPECT_EQ(0, std::memcmp(got->tensor.data(), want.tensor.data(), want.tensor.num_bytes()))
        << want.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(got->tensor.data()) % DTypeSize(want.tensor.dtype()), 0u);
  }
  HostTensor c128 = Random(DType::kC128, {2}, Rng());
  ExpectError(WriteSafetensors(path, {{"z", c128.view()}}), {"'z'", "c128"});
  ExpectError(WriteSafetensors(path, {tensors[0], tensors[0]}), {"given twice"});
  ExpectError(WriteSafetensors(path, {{"__metadata__", keep[0].view()}}), {"__metadata__"});
}

void WriteRaw(const std::string& path, const std::string& header, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(static_cast<char>(n >> (8 * i)));
  out << header << data;
}

TEST(Safetensors, MalformedFilesAreRefusedSayingWhy) {
  const std::string path = TempPath("bad.safetensors");
  const std::string data(16, '\1');
  struct Case {
    std::string header;
    std::string expected;
  };
  const Case cases[] = {
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}} trailing)", "after the header"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]})", "expected ',' or '}'"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[8,24]}})", "fall outside the 16 data"},
      {R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", "needs 12"},
      {R"({"a":{"dtype":"F8_E5M2","shape":[2],"data_offsets":[0,2]}})", "element type F8_E5M2"},
      {R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", "non-negative"},
      {R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", "fraction"},
      {R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", "[begin, end]"},
      {R"({"a":{"dtype":"F32","shape":[99999999999,99999999999],"data_offsets":[0,8]}})",
       "too large"},
      {R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},"a":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
       "appears twice"},
      {R"([1,2])", "not a JSON object"},
      {std::string(20, '[') + std::string(20, ']'), "nested deeper"},
      {R"({"a":"\ud800"})", "unpaired surrogate"},
  };
  for (const Case& c : cases) {
    WriteRaw(path, c.header, data);
    auto file = ReadSafetensors(path);
    ASSERT_FALSE(file.ok()) << c.header;
    EXPECT_NE(file.status().message().find(c.expected), std::string::npos)
        << c.header << " -> " << file.status().message();
  }
  std::ofstream(path, std::ios::binary) << "\x10\0\0";
  ExpectError(ReadSafetensors(path).status(), {"shorter than its 8-byte header length"});
  WriteRaw(path, "{}", "");
  {
    std::ofstream out(path, std::ios::binary);
    out.write("\xff\xff\xff\xff\xff\xff\xff\x7f{}", 10);
  }
  ExpectError(ReadSafetensors(path).status(), {"header length", "exceeds the file"});
}

TEST(Safetensors, RandomCorruptionNeverCrashes) {
  HostTensor a = Random(DType::kF32, {4, 3}, Rng()), b = Random(DType::kBF16, {5}, Rng());
  const std::string good = TempPath("good.safetensors"), bad = TempPath("corrupt.safetensors");
  ASSERT_TRUE(WriteSafetensors(good, {{"a", a.view()}, {"b", b.view()}}, {{"k", "v"}}).ok());
  std::ifstream in(good, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::mt19937_64& rng = Rng();
  int refused = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = bytes;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) mutated[rng() % mutated.size()] = static_cast<char>(rng());
    if (rng() % 4 == 0) mutated.resize(rng() % mutated.size());
    std::ofstream(bad, std::ios::binary | std::ios::trunc) << mutated;
    auto file = ReadSafetensors(bad);
    if (!file.ok()) {
      ++refused;
      EXPECT_FALSE(file.status().message().empty());
      continue;
    }
    for (const NamedTensor& t : file->tensors) {  // whatever was accepted is readable
      volatile uint8_t sum = 0;
      for (size_t k = 0; k < t.tensor.num_bytes(); ++k)
        sum += static_cast<uint8_t*>(t.tensor.data())[k];
    }
  }
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace brt::test

// Provider plugin loading: search path, and errors that name the file and the
// missing dependency or the two ABI versions; a kernel's error code reaching
// the caller.
#include <cstdlib>

#include "brt/provider_abi.h"
#include "test_util.h"

namespace brt::test {
namespace {

std::vector<uint8_t> Negate() {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {2});
  f.Output("y", f.Op("negate", {x}, {{DType::kF32, {2}}})[0]);
  return b.Serialize().value();
}

Status LoadWith(std::vector<std::string> providers, std::vector<std::string> search = {}) {
  SessionOptions o;
  o.providers = std::move(providers);
  o.search_paths = std::move(search);
  return Session::LoadMemory(Negate(), o).status();
}

TEST(Plugins, UnknownProviderNamesTheFileAndTheSearchedDirectories) {
  ExpectError(LoadWith({"nope"}, {"/tmp/brt-no-such-dir"}),
              {"libbrt_provider_nope.so not found", "/tmp/brt-no-such-dir", "BRT_PROVIDER_PATH"});
  ExpectError(LoadWith({"/tmp/brt-no-such-dir/libx.so"}),
              {"'/tmp/brt-no-such-dir/libx.so' does not exist"});
  ExpectError(LoadWith({}), {"providers is empty"});
}

TEST(Plugins, MissingDependencyIsNamed) {
  ExpectError(LoadWith({BRT_TEST_MISSING_DEP_PLUGIN}),
              {"cannot load provider plugin", "libbrt_test_missing_helper.so", "ldd"});
}

TEST(Plugins, AbiMismatchNamesBothVersions) {
  Status s = LoadWith({BRT_TEST_ABI_MISMATCH_PLUGIN});
  ExpectError(s, {"speaks plugin ABI version 99", "this runtime speaks version 1"});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
}

// Fields appended to the ABI table (queues, graphs, events, pinned memory,
// communicators) are optional: a plugin built before them still loads and
// runs, and the core never reads past its struct_size (the plugin poisons
// the rest).
TEST(Plugins, APluginWithTheFirstV1TableStillLoadsAndRuns) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  auto x = f.Input("x", DType::kF32, {4});
  f.Output("y", f.Op("negate", {x}, {{DType::kF32, {4}}})[0]);
  SessionOptions options;
  options.providers = {BRT_TEST_OLDER_TABLE_PLUGIN};
  auto session = LoadBuilt(b, options);
  ASSERT_TRUE(session.ok()) << session.status().message();
  std::vector<float> in = {1.5f, -2.0f, 0.25f, 8.0f}, out(4, 0.0f);
  auto ctx = (*session)->NewRequest();
  ASSERT_TRUE(ctx.ok());
  ASSERT_TRUE((*ctx)->Bind("x", Tensor::Borrow(in.data(), DType::kF32, {4})).ok());
  ASSERT_TRUE((*ctx)->Bind("y", Tensor::Borrow(out.data(), DType::kF32, {4})).ok());
  ASSERT_TRUE((*ctx)->Run().ok());
  EXPECT_EQ(out, (std::vector<float>{-1.5f, 2.0f, -0.25f, -8.0f}));
}

TEST(Plugins, LibraryWithoutEntryPointIsRefused) {
  ExpectError(LoadWith({BRT_TEST_NOT_A_PROVIDER}), {"is not a brt provider", "brt_provider_get"});
}

TEST(Plugins, FoundThroughBrtProviderPath) {
  // The CPU plugin by name through the environment, and by explicit path.
  std::string dir = BRT_TEST_CPU_PLUGIN;
  dir = dir.substr(0, dir.rfind('/'));
  setenv("BRT_PROVIDER_PATH", ("/nonexistent:" + dir).c_str(), 1);
  EXPECT_TRUE(LoadWith({"cpu"}).ok());
  unsetenv("BRT_PROVIDER_PATH");
  EXPECT_TRUE(LoadWith({BRT_TEST_CPU_PLUGIN}).ok());
}

TEST(Plugins, OpNoProviderCanRunFailsAtLoadWithDetails) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {2});
  f.Output("y", f.Op("example.frobnicate", {x}, {{DType::kF32, {2}}})[0]);
  ExpectError(Session::LoadMemory(b.Serialize().value()).status(),
              {"op #0 'example.frobnicate'", "unknown op kind", "brt/ops.def",
               "no loaded provider declares it"});
  ExecutableBuilder c;
  FunctionBuilder& g = c.AddFunction("main");
  ValueId y = g.Input("x", DType::kF32, {2}, {DeviceKind::kCuda, 0});
  g.Output("y", g.Op("negate", {y}, {{DType::kF32, {2}}}, {}, {DeviceKind::kCuda, 0})[0]);
  ExpectError(Session::LoadMemory(c.Serialize().value()).status(),
              {"on cuda", "no provider for this device is loaded"});
}

// Loads a one-op function of the failing-kernels plugin (x -> y, f32 [2]) and
// runs it, synchronously or through RunAsync and Wait: the first failure.
Status RunFailingKernel(const char* kind, std::vector<Attribute> attrs, bool async = false) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {2});
  f.Output("y", f.Op(kind, {x}, {{DType::kF32, {2}}}, std::move(attrs))[0]);
  SessionOptions options;
  options.providers = {BRT_TEST_FAILING_KERNELS_PLUGIN};
  auto session = LoadBuilt(b, options);
  if (!session.ok()) return session.status();
  auto ctx = (*session)->NewRequest();
  if (!ctx.ok()) return ctx.status();
  std::vector<float> in = {1, 2}, out(2);
  BRT_RETURN_IF_ERROR((*ctx)->Bind("x", Tensor::Borrow(in.data(), DType::kF32, {2})));
  BRT_RETURN_IF_ERROR((*ctx)->Bind("y", Tensor::Borrow(out.data(), DType::kF32, {2})));
  if (!async) return (*ctx)->Run();
  BRT_RETURN_IF_ERROR((*ctx)->RunAsync());
  return (*ctx)->Wait();
}

// Out of memory while a kernel prepares is an exhausted resource, not a
// malformed executable.
TEST(Plugins, OutOfMemoryInPrepareIsResourceExhausted) {
  Status s = RunFailingKernel("test.out_of_memory_in_prepare", {});
  ExpectError(s, {"function 'main'", "op #0 'test.out_of_memory_in_prepare'",
                  "failing_kernels_test", "out of host memory"});
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted) << s.ToString();
}

// The code a kernel's run returns is the one Run and Wait give, with the
// function, op and kind named.
TEST(Plugins, ARunFailureKeepsItsCode) {
  const std::pair<int, StatusCode> cases[] = {
      {BRT_ERROR_RESOURCE_EXHAUSTED, StatusCode::kResourceExhausted},
      {BRT_ERROR_INVALID_ARGUMENT, StatusCode::kInvalidArgument},
      {BRT_ERROR_UNSUPPORTED, StatusCode::kUnsupported},
      {BRT_ERROR_INTERNAL, StatusCode::kInternal}};
  for (const auto& [abi_code, expected] : cases)
    for (bool async : {false, true}) {
      Status s = RunFailingKernel("test.fail_in_run", {{"code", abi_code}}, async);
      ExpectError(s, {"function 'main' op #0 'test.fail_in_run' failed",
                      "the test kernel fails with code " + std::to_string(abi_code)});
      EXPECT_EQ(s.code(), expected) << s.ToString();
    }
  // A code this runtime does not know (a newer plugin's) is internal, and named.
  Status s = RunFailingKernel("test.fail_in_run", {{"code", 99}});
  ExpectError(s, {"provider error code 99"});
  EXPECT_EQ(s.code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace brt::test

// Provider plugin loading: search path, and errors that name the file and the
// missing dependency or the two ABI versions.
#include <cstdlib>

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

}  // namespace
}  // namespace brt::test

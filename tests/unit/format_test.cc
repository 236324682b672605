// The executable format: round trip, refusal of foreign or newer files, the
// metadata checksum, weights stored once, and files larger than 2 GiB.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <complex>
#include <set>

#include "brt_generated.h"
#include "format.h"
#include "test_util.h"

namespace brt::test {
namespace {

std::vector<uint8_t> SmallExecutable() {
  ExecutableBuilder b("format-test");
  FunctionBuilder& f = b.AddFunction("twice");
  ValueId x = f.Input("x", DType::kF32, {"n"});
  f.Output("y", f.Op("add", {x, x}, {{DType::kF32, {"n"}}})[0]);
  return b.Serialize().value();
}

TEST(Format, RoundTripKeepsFunctionsAndSignatures) {
  Mlp mlp(Rng());
  ExecutableBuilder b("round-trip");
  mlp.Build(b.AddFunction("mlp"), "batch");
  FunctionBuilder& g = b.AddFunction("other");
  ValueId x = g.Input("x", DType::kI64, {3, "k"});
  g.Output("y", g.Op("negate", {x}, {{DType::kI64, {3, "k"}}})[0]);
  auto s = LoadBuilt(b);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ((*s)->functions().size(), 2u);
  EXPECT_EQ((*s)->functions()[1].arguments[0].shape, (std::vector<Dim>{3, "k"}));
  EXPECT_EQ((*s)->functions()[1].arguments[0].dtype, DType::kI64);
  ExpectError((*s)->NewRequest().status(), {"several functions", "mlp, other"});
}

// Every kind of the op registry is checked at load: arity and required
// attributes (brt.copy was once missing and went unchecked).
TEST(Format, RegistryKindsAreCheckedForArityAndAttributes) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {2});
  f.Output("y", f.Op("brt.copy", {x, x}, {{DType::kF32, {2}}})[0]);
  ExpectError(LoadBuilt(b).status(), {"op #0", "brt.copy", "has 2 operands, expected 1"});

  ExecutableBuilder c;
  FunctionBuilder& g = c.AddFunction("main");
  ValueId t = g.Input("t", DType::kF32, {4, 3});
  ValueId i = g.Input("i", DType::kI32, {2, 1});
  g.Output("y", g.Op("gather", {t, i}, {{DType::kF32, {2, 3}}},
                     {{"offset_dims", std::vector<int64_t>{1}}})[0]);
  ExpectError(LoadBuilt(c).status(),
              {"gather", "missing required attribute 'collapsed_slice_dims'"});
}

// Every attribute the registry lists is type-checked when present, optional
// ones included (slice's strides).
TEST(Format, ListedAttributesOfTheWrongKindAreRefused) {
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kF32, {4});
  f.Output("y", f.Op("slice", {x}, {{DType::kF32, {2}}},
                     {{"start_indices", std::vector<int64_t>{0}},
                      {"limit_indices", std::vector<int64_t>{4}},
                      {"strides", "2"}})[0]);
  ExpectError(LoadBuilt(b).status(),
              {"slice", "attribute 'strides' must be an i64 array, got a string"});
}

// The builder's typed form writes the same executable as the generic one.
TEST(Format, TypedBuilderOpsWriteTheRegistryAttributes) {
  auto build = [](bool typed) {
    ExecutableBuilder b("typed");
    FunctionBuilder& f = b.AddFunction("main");
    ValueId x = f.Input("x", DType::kF32, {4});
    const std::vector<TensorType> result = {{DType::kF32, {2}}};
    f.Output("y", typed ? f.Op(SliceAttrs{.start_indices = {1},
                                          .limit_indices = {4},
                                          .strides = std::vector<int64_t>{2}},
                               {x}, result)[0]
                        : f.Op("slice", {x}, result,
                               {{"start_indices", std::vector<int64_t>{1}},
                                {"limit_indices", std::vector<int64_t>{4}},
                                {"strides", std::vector<int64_t>{2}}})[0]);
    return b.Serialize().value();
  };
  EXPECT_EQ(build(true), build(false));
}

TEST(Format, RejectsForeignAndDamagedBytes) {
  std::vector<uint8_t> bytes = SmallExecutable();
  ExpectError(Session::LoadMemory({}).status(), {"too small"});
  std::vector<uint8_t> foreign = bytes;
  foreign[8] = 'X';  // identifier: after the 4-byte size prefix and the 4-byte root offset
  ExpectError(Session::LoadMemory(foreign).status(), {"file identifier"});
  std::vector<uint8_t> flipped = bytes;
  auto* root = fb::GetMutableSizePrefixedExecutable(flipped.data());
  root->mutable_producer()->Mutate(0, 'F');
  ExpectError(Session::LoadMemory(flipped).status(), {"checksum mismatch"});
  std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + bytes.size() / 2);
  EXPECT_EQ(Session::LoadMemory(cut).status().code(), StatusCode::kInvalidExecutable);
}

TEST(Format, RefusesNewerVersionsNamingBoth) {
  const int newer = core::kFormatMinor + 1;
  for (auto [major, minor] : {std::pair<int, int>{1, newer}, {2, 0}, {0, newer}}) {
    std::vector<uint8_t> bytes = SmallExecutable();
    auto* root = fb::GetMutableSizePrefixedExecutable(bytes.data());
    ASSERT_TRUE(root->mutate_format_major(major) && root->mutate_format_minor(minor));
    ASSERT_TRUE(core::SealExecutable(bytes.data(), bytes.size()));
    auto s = Session::LoadMemory(bytes);
    ExpectError(s.status(),
                {"format version " + std::to_string(major) + "." + std::to_string(minor),
                 "(format 1." + std::to_string(core::kFormatMinor) + ")"});
    EXPECT_EQ(s.status().code(), StatusCode::kUnsupported);
  }
}

// Format 1.4 appended the dtypes i16 and u16 as codes 12 and 13 (never
// renumbered: they are the plugin ABI's too). An executable with i16 and u16
// inputs, weights and results is written as 1.4, loads with its signature
// and runs: an i16 sum wraps, a u16 weight keeps its bytes.
TEST(Format, SixteenBitIntegerExecutablesLoadAndRun) {
  static_assert(BRT_DTYPE_I16 == 12 && BRT_DTYPE_U16 == 13);
  static_assert(static_cast<int>(fb::DType::I16) == BRT_DTYPE_I16 &&
                static_cast<int>(fb::DType::U16) == BRT_DTYPE_U16);
  const std::vector<uint16_t> weight = {0, 1, 65535, 40000};
  ExecutableBuilder b("format-test");
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("x", DType::kI16, {4});
  ValueId w =
      f.Weight("w", DType::kU16, {4},
               std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(weight.data()), 8));
  ValueId y = f.Input("y", DType::kU16, {4});
  f.Output("sum", f.Op("add", {x, x}, {{DType::kI16, {4}}})[0]);
  f.Output("max", f.Op("maximum", {w, y}, {{DType::kU16, {4}}})[0]);
  std::vector<uint8_t> bytes = b.Serialize().value();
  const auto* root = fb::GetSizePrefixedExecutable(bytes.data());
  EXPECT_EQ(root->format_major(), 1);
  EXPECT_GE(root->format_minor(), 4);
  auto s = Session::LoadMemory(bytes);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::vector<DType> dtypes;
  for (const ArgumentInfo& a : (*s)->functions()[0].arguments) dtypes.push_back(a.dtype);
  // x, w, y, sum, max
  EXPECT_EQ(dtypes,
            (std::vector<DType>{DType::kI16, DType::kU16, DType::kU16, DType::kI16, DType::kU16}));
  EXPECT_STREQ(DTypeName(DType::kI16), "i16");
  EXPECT_EQ(ParseDType("u16"), DType::kU16);
  EXPECT_EQ(DTypeSize(DType::kU16), 2u);
  auto ctx = std::move((*s)->NewRequest().value());
  HostTensor in = HostTensor::FromDouble(DType::kI16, {4}, {-32768, 32767, 20000, -3});
  HostTensor other = HostTensor::FromDouble(DType::kU16, {4}, {7, 0, 65534, 50000});
  ASSERT_TRUE(ctx->Bind("x", in.view()).ok() && ctx->Bind("y", other.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  const int16_t* sum = ctx->Output("sum")->data_as<int16_t>();
  EXPECT_EQ(std::vector<int16_t>(sum, sum + 4), (std::vector<int16_t>{0, -2, -25536, -6}));
  const uint16_t* max = ctx->Output("max")->data_as<uint16_t>();
  EXPECT_EQ(std::vector<uint16_t>(max, max + 4), (std::vector<uint16_t>{7, 1, 65535, 50000}));
}

// Format 1.5 appended the complex dtypes c64 and c128 as codes 14 and 15,
// stored as NumPy and XLA do (real part first). An executable with a c64
// input, a c128 weight and the complex-only ops loads and runs on the CPU
// provider; every value is checked against std::complex<double>.
TEST(Format, ComplexExecutablesLoadAndRun) {
  static_assert(BRT_DTYPE_C64 == 14 && BRT_DTYPE_C128 == 15);
  static_assert(static_cast<int>(fb::DType::C64) == BRT_DTYPE_C64 &&
                static_cast<int>(fb::DType::C128) == BRT_DTYPE_C128);
  using Z = std::complex<double>;
  std::mt19937_64& rng = Rng();
  HostTensor z = Random(DType::kC64, {5}, rng, -2, 2);
  HostTensor w = Random(DType::kC128, {5}, rng, -2, 2);
  HostTensor re = Random(DType::kF64, {5}, rng, -2, 2);
  ExecutableBuilder b("format-test");
  FunctionBuilder& f = b.AddFunction("main");
  ValueId x = f.Input("z", DType::kC64, {5});
  ValueId weight =
      f.Weight("w", DType::kC128, {5},
               std::span<const uint8_t>(static_cast<const uint8_t*>(w.view().data()), 5 * 16));
  ValueId parts = f.Input("re", DType::kF64, {5});
  ValueId wide = f.Op("convert", {x}, {{DType::kC128, {5}}})[0];
  ValueId product = f.Op("multiply", {wide, weight}, {{DType::kC128, {5}}})[0];
  f.Output("exp", f.Op("exponential", {x}, {{DType::kC64, {5}}})[0]);
  f.Output("imag", f.Op("imag", {product}, {{DType::kF64, {5}}})[0]);
  f.Output("abs", f.Op("abs", {x}, {{DType::kF32, {5}}})[0]);
  f.Output("made", f.Op("complex", {parts, parts}, {{DType::kC128, {5}}})[0]);
  std::vector<uint8_t> bytes = b.Serialize().value();
  EXPECT_GE(fb::GetSizePrefixedExecutable(bytes.data())->format_minor(), 5);
  auto s = Session::LoadMemory(bytes);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->functions()[0].arguments[0].dtype, DType::kC64);
  EXPECT_STREQ(DTypeName(DType::kC128), "c128");
  EXPECT_EQ(ParseDType("c64"), DType::kC64);
  EXPECT_EQ(DTypeSize(DType::kC128), 16u);
  auto ctx = std::move((*s)->NewRequest().value());
  ASSERT_TRUE(ctx->Bind("z", z.view()).ok() && ctx->Bind("re", re.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  const auto* exp = ctx->Output("exp")->data_as<std::complex<float>>();
  const double* imag = ctx->Output("imag")->data_as<double>();
  const float* abs = ctx->Output("abs")->data_as<float>();
  const auto* made = ctx->Output("made")->data_as<Z>();
  for (int i = 0; i < 5; ++i) {
    const Z zi(z.as<float>()[2 * i], z.as<float>()[2 * i + 1]);
    const Z wi(w.as<double>()[2 * i], w.as<double>()[2 * i + 1]);
    EXPECT_LT(std::abs(Z(exp[i]) - std::exp(zi)), 1e-5 * std::abs(std::exp(zi))) << i;
    EXPECT_NEAR(imag[i], (zi * wi).imag(), 1e-12) << i;
    EXPECT_NEAR(abs[i], std::abs(zi), 1e-6) << i;
    EXPECT_EQ(made[i], Z(re.as<double>()[i], re.as<double>()[i])) << i;
  }
}

TEST(Format, WeightsAreAlignedSegmentsAfterTheMetadata) {
  Mlp mlp(Rng());
  ExecutableBuilder b;
  mlp.Build(b.AddFunction("mlp"), 1);
  std::vector<uint8_t> bytes = b.Serialize().value();
  const auto* root = fb::GetSizePrefixedExecutable(bytes.data());
  const uint32_t fb_size = flatbuffers::ReadScalar<uint32_t>(bytes.data());
  ASSERT_EQ(root->weights()->size(), 6u);
  for (const auto* w : *root->weights()) {
    EXPECT_EQ(w->offset() % 64, 0u);
    EXPECT_GE(w->offset(), fb_size + 4u);
    EXPECT_LE(w->offset() + w->length(), bytes.size());
  }
  // The first weight holds layer1.w verbatim.
  EXPECT_EQ(std::memcmp(bytes.data() + root->weights()->Get(0)->offset(), mlp.w1.data(),
                        mlp.w1.num_bytes()),
            0);
}

// Two functions of one model (two input shapes) share its weights: equal
// bytes are stored once, a different weight gets its own segment, and each
// function reads its own.
TEST(Format, EqualWeightsAreStoredOnce) {
  std::vector<float> shared(1024), other(1024);
  for (size_t i = 0; i < shared.size(); ++i)
    shared[i] = 0.25f * static_cast<float>(i) - 7, other[i] = 3 - 0.5f * static_cast<float>(i);
  auto as_bytes = [](const std::vector<float>& v) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(v.data()), v.size() * 4);
  };
  ExecutableBuilder b;
  for (int rows : {1, 3}) {
    FunctionBuilder& f = b.AddFunction("rows" + std::to_string(rows));
    ValueId w = f.Weight("w", DType::kF32, {1024}, as_bytes(shared));
    ValueId v = f.Weight("v", DType::kF32, {1024}, as_bytes(rows == 1 ? shared : other));
    ValueId x = f.Input("x", DType::kF32, {rows, 1024});
    ValueId sum = f.Op("add", {w, v}, {{DType::kF32, {1024}}})[0];
    ValueId wide = f.Op("broadcast_in_dim", {sum}, {{DType::kF32, {rows, 1024}}},
                        {{"broadcast_dimensions", std::vector<int64_t>{1}}})[0];
    f.Output("y", f.Op("add", {x, wide}, {{DType::kF32, {rows, 1024}}})[0]);
  }
  auto bytes = b.Serialize();
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  const fb::Executable* root = fb::GetSizePrefixedExecutable(bytes->data());
  ASSERT_EQ(root->weights()->size(), 4u);  // a segment per weight argument ...
  std::set<uint64_t> offsets;
  for (const fb::WeightSegment* w : *root->weights()) offsets.insert(w->offset());
  EXPECT_EQ(offsets.size(), 2u);  // ... in two places
  EXPECT_LT(bytes->size(), 3u * 4096);
  auto s = Session::LoadMemory(*bytes);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  for (int rows : {1, 3}) {
    auto ctx = std::move((*s)->NewRequest("rows" + std::to_string(rows)).value());
    std::vector<double> x(rows * 1024);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i % 5);
    HostTensor in = HostTensor::FromDouble(DType::kF32, {rows, 1024}, x);
    ASSERT_TRUE(ctx->Bind("x", in.view()).ok());
    ASSERT_TRUE(ctx->Run().ok());
    const float* y = ctx->Output("y")->data_as<float>();
    for (int i = 0; i < rows * 1024; ++i) {
      const float second = rows == 1 ? shared[i % 1024] : other[i % 1024];
      ASSERT_EQ(y[i], static_cast<float>(x[i]) + (shared[i % 1024] + second)) << rows << " " << i;
    }
  }
}

TEST(Format, LoadsAFileLargerThanTwoGibibytes) {
  // 2.25 GiB of f32 weight, zero but for its last elements: the builder
  // writes a sparse file, the loader maps it and the op reads the tail.
  const int64_t n = (int64_t{9} << 28) / 4;
  void* mem = mmap(nullptr, n * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  float* w = static_cast<float*>(mem);
  for (int i = 1; i <= 4; ++i) w[n - i] = static_cast<float>(i) * 1.5f;
  ExecutableBuilder b;
  FunctionBuilder& f = b.AddFunction("tail");
  ValueId big = f.Weight("big", DType::kF32, {n},
                         std::span<const uint8_t>(static_cast<uint8_t*>(mem), n * 4));
  munmap(mem, n * 4);
  ValueId in = f.Input("x", DType::kF32, {4});
  ValueId tail = f.Op("slice", {big}, {{DType::kF32, {4}}},
                      {{"start_indices", std::vector<int64_t>{n - 4}},
                       {"limit_indices", std::vector<int64_t>{n}}})[0];
  f.Output("y", f.Op("add", {tail, in}, {{DType::kF32, {4}}})[0]);
  char path[] = "/tmp/brt_large_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_TRUE(b.Save(path).ok());
  struct stat st {};
  ASSERT_EQ(stat(path, &st), 0);
  EXPECT_GT(st.st_size, int64_t{1} << 31);
  auto s = Session::LoadFile(path);
  unlink(path);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  auto ctx = std::move((*s)->NewRequest().value());
  HostTensor x = HostTensor::FromDouble(DType::kF32, {4}, {1, 2, 3, 4});
  ASSERT_TRUE(ctx->Bind("x", x.view()).ok());
  ASSERT_TRUE(ctx->Run().ok());
  const float* y = ctx->Output("y")->data_as<float>();
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{6 + 1, 4.5f + 2, 3 + 3, 1.5f + 4}));
}

}  // namespace
}  // namespace brt::test

namespace brt::test {
namespace {

// A per-rank program keeps its mesh and argument shardings for callers
// that slice global arrays; a sharding naming an unknown axis is refused.
TEST(Format, KeepsTheMeshAndShardingsOfAPerRankProgram) {
  auto build = [](ExecutableBuilder& b, std::string axis) {
    auto& f = b.AddFunction("main");
    auto x = f.Input("x", DType::kF32, {2, 3});
    f.Output("y", f.Op("exponential", {x}, {{DType::kF32, {2, 3}}})[0]);
    f.SetMesh({{"data", 2}, {"model", 4}});
    EXPECT_TRUE(f.SetSharding("x", {axis, ""}).ok());
    EXPECT_FALSE(f.SetSharding("nope", {}).ok());
  };
  // Through LoadBuilt: the fuzzer's seeds then include a per-rank program.
  ExecutableBuilder good, bad;
  build(good, "data,model");
  build(bad, "data,pipe");
  auto session = LoadBuilt(good);
  ASSERT_TRUE(session.ok()) << session.status().message();
  const FunctionInfo& info = (*session)->functions()[0];
  ASSERT_EQ(info.mesh.size(), 2u);
  EXPECT_EQ(info.mesh[1].name, "model");
  EXPECT_EQ(info.mesh[1].size, 4);
  EXPECT_EQ(info.arguments[0].sharding, (std::vector<std::string>{"data,model", ""}));
  EXPECT_TRUE(info.arguments[1].sharding.empty());
  ExpectError(LoadBuilt(bad).status(), {"argument #0 'x'", "mesh axis 'pipe'"});
}

}  // namespace
}  // namespace brt::test

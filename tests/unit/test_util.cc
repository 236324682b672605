#include "test_util.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace brt::test {
namespace {

double HalfToDouble(uint16_t h) {
  const int sign = h >> 15, exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  double v;
  if (exp == 0)
    v = std::ldexp(mant, -24);
  else if (exp == 31)
    v = mant ? NAN : INFINITY;
  else
    v = std::ldexp(1024 + mant, exp - 25);
  return sign ? -v : v;
}

uint16_t DoubleToHalf(double d) {
  // Round through float then to nearest-even half, by search over candidates.
  const float f = static_cast<float>(d);
  if (std::isnan(f)) return 0x7E00;
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(f);
  uint16_t best = 0;
  double best_err = INFINITY;
  for (uint32_t bits = 0; bits <= 0x7C00; ++bits) {
    const double err = std::fabs(HalfToDouble(static_cast<uint16_t>(bits)) - a);
    if (err < best_err || (err == best_err && (bits & 1) == 0))
      best_err = err, best = static_cast<uint16_t>(bits);
  }
  return sign | best;
}

double Bf16ToDouble(uint16_t b) {
  uint32_t x = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

uint16_t DoubleToBf16(double d) {
  float f = static_cast<float>(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if (std::isnan(f)) return 0x7FC0;
  x += 0x7FFF + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace

double HostTensor::Get(int64_t i) const {
  switch (dtype) {
    case DType::kF32:
      return as<float>()[i];
    case DType::kF64:
      return as<double>()[i];
    case DType::kF16:
      return HalfToDouble(as<uint16_t>()[i]);
    case DType::kBF16:
      return Bf16ToDouble(as<uint16_t>()[i]);
    case DType::kI1:
    case DType::kU8:
      return as<uint8_t>()[i];
    case DType::kI8:
      return as<int8_t>()[i];
    case DType::kI16:
      return as<int16_t>()[i];
    case DType::kU16:
      return as<uint16_t>()[i];
    case DType::kI32:
      return as<int32_t>()[i];
    case DType::kI64:
      return static_cast<double>(as<int64_t>()[i]);
    case DType::kU32:
      return as<uint32_t>()[i];
    case DType::kU64:
      return static_cast<double>(as<uint64_t>()[i]);
    default:
      return NAN;
  }
}

void HostTensor::Set(int64_t i, double v) {
  switch (dtype) {
    case DType::kF32:
      as<float>()[i] = static_cast<float>(v);
      break;
    case DType::kF64:
      as<double>()[i] = v;
      break;
    case DType::kF16:
      as<uint16_t>()[i] = DoubleToHalf(v);
      break;
    case DType::kBF16:
      as<uint16_t>()[i] = DoubleToBf16(v);
      break;
    case DType::kI1:
      as<uint8_t>()[i] = v != 0;
      break;
    case DType::kU8:
      as<uint8_t>()[i] = static_cast<uint8_t>(v);
      break;
    case DType::kI8:
      as<int8_t>()[i] = static_cast<int8_t>(v);
      break;
    case DType::kI16:
      as<int16_t>()[i] = static_cast<int16_t>(v);
      break;
    case DType::kU16:
      as<uint16_t>()[i] = static_cast<uint16_t>(v);
      break;
    case DType::kI32:
      as<int32_t>()[i] = static_cast<int32_t>(v);
      break;
    case DType::kI64:
      as<int64_t>()[i] = static_cast<int64_t>(v);
      break;
    case DType::kU32:
      as<uint32_t>()[i] = static_cast<uint32_t>(v);
      break;
    case DType::kU64:
      as<uint64_t>()[i] = static_cast<uint64_t>(v);
      break;
    default:
      break;
  }
}

std::vector<double> HostTensor::ToDouble() const {
  std::vector<double> v(numel());
  for (int64_t i = 0; i < numel(); ++i) v[i] = Get(i);
  return v;
}

HostTensor HostTensor::FromDouble(DType t, std::vector<int64_t> shape,
                                  const std::vector<double>& v) {
  HostTensor h(t, std::move(shape));
  for (int64_t i = 0; i < h.numel(); ++i) h.Set(i, v.at(i));
  return h;
}

HostTensor Random(DType t, std::vector<int64_t> shape, std::mt19937_64& rng, double lo, double hi) {
  HostTensor h(t, std::move(shape));
  if (t == DType::kC64 || t == DType::kC128) {  // both parts in [lo, hi)
    std::uniform_real_distribution<double> d(lo, hi);
    for (int64_t i = 0; i < 2 * h.numel(); ++i)
      t == DType::kC64 ? void(h.as<float>()[i] = static_cast<float>(d(rng)))
                       : void(h.as<double>()[i] = d(rng));
    return h;
  }
  const bool integral = t == DType::kI1 || t == DType::kI8 || t == DType::kI16 ||
                        t == DType::kI32 || t == DType::kI64 || t == DType::kU8 ||
                        t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
  for (int64_t i = 0; i < h.numel(); ++i) {
    if (integral) {
      std::uniform_int_distribution<int64_t> d(static_cast<int64_t>(lo), static_cast<int64_t>(hi));
      h.Set(i, static_cast<double>(d(rng)));
    } else {
      std::uniform_real_distribution<double> d(lo, hi);
      h.Set(i, d(rng));
    }
  }
  return h;
}

Expected<std::shared_ptr<Session>> LoadBuilt(const ExecutableBuilder& b, SessionOptions options) {
  auto bytes = b.Serialize();
  if (!bytes.ok()) return bytes.status();
  // scripts/fuzz.sh seeds the loader fuzzer with every executable the tests build.
  if (const char* dir = std::getenv("BRT_SAVE_EXECUTABLES")) {
    static std::atomic<int> counter{0};
    std::ofstream(std::string(dir) + "/test" + std::to_string(counter++) + ".brtx",
                  std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes->data()),
               static_cast<std::streamsize>(bytes->size()));
  }
  return Session::LoadMemory(*bytes, options);
}

namespace {

// BRT_TEST_DEVICE=cuda runs every single-op test on the CUDA provider, with
// host inputs and outputs staged by the core, against the same references.
bool OnCuda() {
  static const bool cuda = [] {
    const char* d = std::getenv("BRT_TEST_DEVICE");
    return d && std::string(d) == "cuda";
  }();
  return cuda;
}

// Whether this machine has a GPU the CUDA run must use: BRT_EXPECT_GPU=1 or 0
// when set (scripts/gpu_suite.sh sets 1 where nvidia-smi sees one), else
// whether the NVIDIA driver shows a GPU.
bool GpuExpected() {
  if (const char* e = std::getenv("BRT_EXPECT_GPU")) return std::string(e) == "1";
  std::error_code ec;
  return std::filesystem::exists("/dev/nvidia0", ec) ||
         (std::filesystem::is_directory("/proc/driver/nvidia/gpus", ec) &&
          !std::filesystem::is_empty("/proc/driver/nvidia/gpus", ec));
}

// Without a GPU, every test of a CUDA run is skipped, saying why. With one, a
// provider, library or driver that fails the probe fails the run: a broken
// GPU path must never pass as "skipped".
class CudaEnvironment : public testing::Environment {
 public:
  void SetUp() override {
    if (!OnCuda()) return;
    ExecutableBuilder b("brt-unit-test");
    FunctionBuilder& f = b.AddFunction("probe");
    ValueId x = f.Input("x", DType::kF32, {4}, TestDevice());
    f.Output("y", f.Op("negate", {x}, {{DType::kF32, {4}}}, {}, TestDevice())[0]);
    float in[4] = {1, 2, 3, 4}, out[4] = {};
    Status s = [&]() -> Status {
      auto session = Session::LoadMemory(b.Serialize().value(), TestOptions());
      if (!session.ok()) return session.status();
      auto ctx = (*session)->NewRequest();
      if (!ctx.ok()) return ctx.status();
      BRT_RETURN_IF_ERROR((*ctx)->Bind("x", Tensor::Borrow(in, DType::kF32, {4})));
      BRT_RETURN_IF_ERROR((*ctx)->Bind("y", Tensor::Borrow(out, DType::kF32, {4})));
      return (*ctx)->Run();
    }();
    if (s.ok() && out[3] == -4) return;
    const std::string why = s.ok() ? "negate(4) gave " + std::to_string(out[3]) : s.ToString();
    if (GpuExpected())
      GTEST_FAIL() << "a GPU is visible (BRT_EXPECT_GPU or /dev/nvidia0) but the CUDA provider "
                      "cannot run on it: "
                   << why;
    GTEST_SKIP() << "no usable CUDA device: " << why;
  }
};
const auto* const kCudaEnvironment = testing::AddGlobalTestEnvironment(new CudaEnvironment);

}  // namespace

Device TestDevice() { return OnCuda() ? Device{DeviceKind::kCuda, 0} : Device{}; }

SessionOptions TestOptions() {
  SessionOptions o;
  if (OnCuda()) o.providers = {"cuda"};
  return o;
}

Expected<std::vector<HostTensor>> RunOp(const OpRun& op) {
  ExecutableBuilder b("brt-unit-test");
  FunctionBuilder& f = b.AddFunction("main");
  const Device device = TestDevice();
  std::vector<ValueId> args;
  auto is_weight = [&](size_t i) {
    return std::find(op.weights.begin(), op.weights.end(), static_cast<int>(i)) != op.weights.end();
  };
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const HostTensor& in = op.inputs[i];
    args.push_back(is_weight(i)
                       ? f.Weight("in" + std::to_string(i), in.dtype, in.shape,
                                  {static_cast<const uint8_t*>(in.data()), in.num_bytes()}, device)
                       : f.Input("in" + std::to_string(i), in.dtype, Dims(in.shape), device));
  }
  auto results = f.Op(op.kind, args, op.results, op.attrs, device);
  for (size_t i = 0; i < results.size(); ++i) f.Output("out" + std::to_string(i), results[i]);
  auto session = LoadBuilt(b, TestOptions());
  if (!session.ok()) return session.status();
  auto ctx = (*session)->NewRequest();
  if (!ctx.ok()) return ctx.status();
  std::vector<HostTensor> inputs = op.inputs;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!is_weight(i))
      BRT_RETURN_IF_ERROR((*ctx)->Bind("in" + std::to_string(i), inputs[i].view()));
  std::vector<HostTensor> outs;
  for (const TensorType& t : op.results) {
    std::vector<int64_t> shape;
    for (const Dim& d : t.dims) shape.push_back(d.size);
    HostTensor h(t.dtype, shape);
    // Poison: NaN bit patterns for floats, 0xA5 elsewhere, so an element the
    // kernel forgets to write cannot pass as a correct value.
    std::memset(h.data(), 0xA5, h.storage.size() * 8);
    if (t.dtype == DType::kF32)
      for (int64_t i = 0; i < h.numel(); ++i) h.as<float>()[i] = NAN;
    outs.push_back(std::move(h));
  }
  const auto& info = (*ctx)->function();
  for (size_t i = 0; i < outs.size(); ++i)
    BRT_RETURN_IF_ERROR((*ctx)->Bind(info.output_indices[i], outs[i].view()));
  BRT_RETURN_IF_ERROR((*ctx)->Run());
  return outs;
}

std::vector<HostTensor> MustRunOp(const OpRun& op) {
  auto r = RunOp(op);
  EXPECT_TRUE(r.ok()) << op.kind << ": " << r.status().ToString();
  // Empty tensors, so callers' comparisons fail cleanly instead of reading nothing.
  if (!r.ok()) return std::vector<HostTensor>(op.results.size(), HostTensor(DType::kF32, {0}));
  return *r;
}

double RelError(const std::vector<double>& out, const std::vector<double>& ref) {
  if (out.size() != ref.size()) return INFINITY;
  double num = 0, den = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    if (std::isnan(out[i]) != std::isnan(ref[i])) return INFINITY;
    if (std::isnan(ref[i])) continue;
    if (std::isinf(ref[i]) || std::isinf(out[i])) {
      if (out[i] != ref[i]) return INFINITY;
      continue;
    }
    num += (out[i] - ref[i]) * (out[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return idx;
}

int64_t Ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& shape) {
  int64_t flat = 0;
  for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

std::vector<Dim> Dims(const std::vector<int64_t>& shape) {
  return std::vector<Dim>(shape.begin(), shape.end());
}

void ExpectError(const Status& s, std::initializer_list<std::string> fragments) {
  EXPECT_FALSE(s.ok()) << "expected an error";
  for (const std::string& f : fragments)
    EXPECT_NE(s.message().find(f), std::string::npos)
        << "message lacks '" << f << "': " << s.message();
}

}  // namespace brt::test

namespace brt::test {

Mlp::Mlp(std::mt19937_64& rng)
    : w1(Random(DType::kF32, {in, hidden}, rng, -0.5, 0.5)),
      b1(Random(DType::kF32, {hidden}, rng, -0.1, 0.1)),
      w2(Random(DType::kF32, {hidden, hidden}, rng, -0.5, 0.5)),
      b2(Random(DType::kF32, {hidden}, rng, -0.1, 0.1)),
      w3(Random(DType::kF32, {hidden, out}, rng, -0.5, 0.5)),
      b3(Random(DType::kF32, {out}, rng, -0.1, 0.1)) {}

void Mlp::Build(FunctionBuilder& f, Dim batch) const {
  auto bytes = [](const HostTensor& t) {
    return std::span<const uint8_t>(static_cast<const uint8_t*>(t.data()), t.num_bytes());
  };
  ValueId x = f.Input("x", DType::kF32, {batch, in});
  const std::vector<Attribute> matmul = {{"lhs_contracting_dimensions", std::vector<int64_t>{1}},
                                         {"rhs_contracting_dimensions", std::vector<int64_t>{0}}};
  float zero = 0;
  std::vector<uint8_t> zero_bytes(reinterpret_cast<uint8_t*>(&zero),
                                  reinterpret_cast<uint8_t*>(&zero) + 4);
  ValueId zero_v = f.Op("constant", {}, {{DType::kF32, {}}}, {{"value", zero_bytes}})[0];
  auto dense = [&](ValueId h, const HostTensor& w, const HostTensor& b, const std::string& name,
                   int64_t n, bool relu) {
    ValueId wv = f.Weight(name + ".w", DType::kF32, w.shape, bytes(w));
    ValueId bv = f.Weight(name + ".b", DType::kF32, b.shape, bytes(b));
    ValueId y = f.Op("dot_general", {h, wv}, {{DType::kF32, {batch, n}}}, matmul)[0];
    y = f.Op("add", {y, bv}, {{DType::kF32, {batch, n}}})[0];
    if (relu) y = f.Op("maximum", {y, zero_v}, {{DType::kF32, {batch, n}}})[0];
    return y;
  };
  ValueId h = dense(x, w1, b1, "layer1", hidden, true);
  h = dense(h, w2, b2, "layer2", hidden, true);
  h = dense(h, w3, b3, "layer3", out, false);
  f.Output("probabilities",
           f.Op("brt.softmax", {h}, {{DType::kF32, {batch, out}}}, {{"axis", 1}})[0]);
}

std::vector<double> Mlp::Reference(const HostTensor& x) const {
  const int64_t n = x.shape[0];
  auto dense = [&](const std::vector<double>& h, int64_t k, const HostTensor& w,
                   const HostTensor& b, int64_t m, bool relu) {
    std::vector<double> y(n * m);
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = 0; c < m; ++c) {
        double acc = b.Get(c);
        for (int64_t i = 0; i < k; ++i) acc += h[r * k + i] * w.Get(i * m + c);
        y[r * m + c] = relu ? std::max(acc, 0.0) : acc;
      }
    return y;
  };
  std::vector<double> h = dense(x.ToDouble(), in, w1, b1, hidden, true);
  h = dense(h, hidden, w2, b2, hidden, true);
  h = dense(h, hidden, w3, b3, out, false);
  for (int64_t r = 0; r < n; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < out; ++c) mx = std::max(mx, h[r * out + c]);
    for (int64_t c = 0; c < out; ++c) sum += std::exp(h[r * out + c] - mx);
    for (int64_t c = 0; c < out; ++c) h[r * out + c] = std::exp(h[r * out + c] - mx) / sum;
  }
  return h;
}

}  // namespace brt::test

// Builds a 3-layer MLP (dense+relu, dense+relu, dense+softmax) with the
// builder API, saves it, loads it through the CPU provider plugin, runs it and
// compares with a float64 reference computed here. Exit code 0 on a match
// (relative error <= 1e-5).
#include <brt/builder.h>
#include <brt/session.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

std::vector<float> Random(size_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> d(-scale, scale);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::span<const uint8_t> Bytes(const std::vector<float>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)};
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "mlp_consumer.brtx";
  const int64_t batch = 8, sizes[4] = {32, 64, 64, 10};
  std::mt19937 rng(7);
  std::vector<float> w[3], b[3];
  for (int l = 0; l < 3; ++l)
    w[l] = Random(sizes[l] * sizes[l + 1], rng, 0.3f), b[l] = Random(sizes[l + 1], rng, 0.1f);

  brt::ExecutableBuilder builder("mlp-consumer-example");
  brt::FunctionBuilder& f = builder.AddFunction("mlp");
  brt::ValueId h = f.Input("x", brt::DType::kF32, {batch, sizes[0]});
  float zero = 0;
  brt::ValueId zero_v =
      f.Op("constant", {}, {{brt::DType::kF32, {}}},
           {{"value", std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&zero),
                                           reinterpret_cast<uint8_t*>(&zero) + 4)}})[0];
  for (int l = 0; l < 3; ++l) {
    brt::TensorType t{brt::DType::kF32, {batch, sizes[l + 1]}};
    brt::ValueId wv =
        f.Weight("w" + std::to_string(l), brt::DType::kF32, {sizes[l], sizes[l + 1]}, Bytes(w[l]));
    brt::ValueId bv =
        f.Weight("b" + std::to_string(l), brt::DType::kF32, {sizes[l + 1]}, Bytes(b[l]));
    h = f.Op("dot_general", {h, wv}, {t},
             {{"lhs_contracting_dimensions", std::vector<int64_t>{1}},
              {"rhs_contracting_dimensions", std::vector<int64_t>{0}}})[0];
    h = f.Op("add", {h, bv}, {t})[0];
    h = l < 2 ? f.Op("maximum", {h, zero_v}, {t})[0]
              : f.Op("brt.softmax", {h}, {t}, {{"axis", 1}})[0];
  }
  f.Output("probabilities", h);
  if (brt::Status s = builder.Save(path); !s.ok())
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;

  auto session = brt::Session::LoadFile(path);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  auto ctx = (*session)->NewRequest("mlp");
  if (!ctx.ok()) return std::fprintf(stderr, "%s\n", ctx.status().ToString().c_str()), 1;
  std::vector<float> x = Random(batch * sizes[0], rng, 1.0f);
  if (brt::Status s =
          (*ctx)->Bind("x", brt::Tensor::Borrow(x.data(), brt::DType::kF32, {batch, sizes[0]}));
      !s.ok())
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
  if (brt::Status s = (*ctx)->Run(); !s.ok())
    return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
  const float* out = (*ctx)->Output("probabilities")->data_as<float>();

  std::vector<double> ref(x.begin(), x.end());
  for (int l = 0; l < 3; ++l) {
    std::vector<double> next(batch * sizes[l + 1]);
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t c = 0; c < sizes[l + 1]; ++c) {
        double acc = b[l][c];
        for (int64_t k = 0; k < sizes[l]; ++k)
          acc += ref[r * sizes[l] + k] * w[l][k * sizes[l + 1] + c];
        next[r * sizes[l + 1] + c] = l < 2 ? std::max(acc, 0.0) : acc;
      }
    ref.swap(next);
  }
  double num = 0, den = 0;
  for (int64_t r = 0; r < batch; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < 10; ++c) mx = std::max(mx, ref[r * 10 + c]);
    for (int64_t c = 0; c < 10; ++c) sum += std::exp(ref[r * 10 + c] - mx);
    for (int64_t c = 0; c < 10; ++c) {
      const double p = std::exp(ref[r * 10 + c] - mx) / sum;
      num += (out[r * 10 + c] - p) * (out[r * 10 + c] - p), den += p * p;
    }
  }
  const double rel = std::sqrt(num / den);
  std::printf("mlp_consumer: providers=%s relative error vs float64 = %.3g\n",
              (*session)->provider_names()[0].c_str(), rel);
  return rel <= 1e-5 ? 0 : 1;
}

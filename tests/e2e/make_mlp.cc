// Writes the end-to-end MLP: DIR/mlp.brtx (3 dense layers, relu, softmax,
// weights as segments), DIR/mlp_dynamic.brtx (the same over a symbolic
// batch), its weights as DIR/{w,b}{1,2,3}.npy for the NumPy reference, and a
// random input DIR/x.npy.
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "brt/builder.h"
#include "npy.h"

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: make_mlp DIR\n"), 2;
  const std::string dir = argv[1];
  const int64_t batch = 16, sizes[4] = {64, 128, 128, 10};
  std::mt19937_64 rng(42);
  auto random = [&](std::vector<int64_t> shape, double scale) {
    brt::Tensor t = brt::Tensor::Allocate(brt::DType::kF32, shape);
    std::uniform_real_distribution<float> d(static_cast<float>(-scale), static_cast<float>(scale));
    for (int64_t i = 0; i < t.num_elements(); ++i) t.data_as<float>()[i] = d(rng);
    return t;
  };
  // mlp.brtx has a batch of 16; mlp_dynamic.brtx the same layers over a
  // symbolic batch "b" (at least 1).
  brt::ExecutableBuilder b("make_mlp"), dynamic("make_mlp");
  brt::FunctionBuilder& fixed = b.AddFunction("mlp");
  brt::FunctionBuilder& any_batch = dynamic.AddFunction("mlp");
  any_batch.AddConstraint("b >= 1");
  for (brt::FunctionBuilder* builder : {&fixed, &any_batch}) {
    brt::FunctionBuilder& f = *builder;
    const brt::Dim rows = builder == &fixed ? brt::Dim(batch) : brt::Dim("b");
    rng.seed(42);  // the same weights in both
    brt::ValueId h = f.Input("x", brt::DType::kF32, {rows, sizes[0]});
    float zero = 0;
    brt::ValueId zero_v =
        f.Op("constant", {}, {{brt::DType::kF32, {}}},
             {{"value", std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&zero),
                                             reinterpret_cast<uint8_t*>(&zero) + 4)}})[0];
    for (int l = 0; l < 3; ++l) {
      // Weights scaled so the softmax is far from uniform and errors show.
      brt::Tensor w =
          random({sizes[l], sizes[l + 1]}, 4.0 / std::sqrt(static_cast<double>(sizes[l])));
      brt::Tensor bias = random({sizes[l + 1]}, 0.1);
      const std::string n = std::to_string(l + 1);
      if (!brt::tools::WriteNpy(dir + "/w" + n + ".npy", w).ok() ||
          !brt::tools::WriteNpy(dir + "/b" + n + ".npy", bias).ok())
        return std::fprintf(stderr, "cannot write weights to %s\n", dir.c_str()), 1;
      auto bytes = [](const brt::Tensor& t) {
        return std::span<const uint8_t>(static_cast<const uint8_t*>(t.data()), t.num_bytes());
      };
      brt::ValueId wv = f.Weight("w" + n, brt::DType::kF32, w.shape(), bytes(w));
      brt::ValueId bv = f.Weight("b" + n, brt::DType::kF32, bias.shape(), bytes(bias));
      brt::TensorType t{brt::DType::kF32, {rows, sizes[l + 1]}};
      h = f.Op("dot_general", {h, wv}, {t},
               {{"lhs_contracting_dimensions", std::vector<int64_t>{1}},
                {"rhs_contracting_dimensions", std::vector<int64_t>{0}}})[0];
      h = f.Op("add", {h, bv}, {t})[0];
      h = l < 2 ? f.Op("maximum", {h, zero_v}, {t})[0]
                : f.Op("brt.softmax", {h}, {t}, {{"axis", 1}})[0];
    }
    f.Output("probabilities", h);
  }
  for (auto [builder, name] : {std::pair{&b, "/mlp.brtx"}, {&dynamic, "/mlp_dynamic.brtx"}})
    if (brt::Status s = builder->Save(dir + name); !s.ok())
      return std::fprintf(stderr, "%s\n", s.ToString().c_str()), 1;
  if (!brt::tools::WriteNpy(dir + "/x.npy", random({batch, sizes[0]}, 1.0)).ok()) return 1;
  std::printf("wrote %s/mlp.brtx\n", dir.c_str());
  return 0;
}

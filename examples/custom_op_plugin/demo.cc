// Runs a program mixing a built-in op (exponential, from the CPU provider)
// with the plugin's example.scaled_add: y = exp(a) + 0.5 * b.
#include <brt/builder.h>
#include <brt/session.h>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  brt::ExecutableBuilder b("custom-op-demo");
  brt::FunctionBuilder& f = b.AddFunction("main");
  brt::ValueId a = f.Input("a", brt::DType::kF32, {5});
  brt::ValueId c = f.Input("b", brt::DType::kF32, {5});
  brt::ValueId e = f.Op("exponential", {a}, {{brt::DType::kF32, {5}}})[0];
  f.Output("y", f.Op("example.scaled_add", {e, c}, {{brt::DType::kF32, {5}}}, {{"alpha", 0.5}})[0]);
  auto bytes = b.Serialize();
  brt::SessionOptions options;
  options.providers = {"cpu", "example"};
  options.search_paths = {PLUGIN_DIR};
  auto session = brt::Session::LoadMemory(*bytes, options);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  auto ctx = std::move((*session)->NewRequest().value());
  std::vector<float> x = {0.5f, -1.f, 2.f, 0.f, 1.25f}, y = {3.f, 1.f, -2.f, 8.f, 0.5f};
  if (!ctx->Bind("a", brt::Tensor::Borrow(x.data(), brt::DType::kF32, {5})).ok() ||
      !ctx->Bind("b", brt::Tensor::Borrow(y.data(), brt::DType::kF32, {5})).ok() ||
      !ctx->Run().ok())
    return std::fprintf(stderr, "run failed\n"), 1;
  const float* out = ctx->Output("y")->data_as<float>();
  int bad = 0;
  for (int i = 0; i < 5; ++i) {
    const double expect = std::exp(static_cast<double>(x[i])) + 0.5 * y[i];
    if (std::fabs(out[i] - expect) > 1e-6 * std::fabs(expect) + 1e-7) ++bad;
    std::printf("y[%d] = %.7g (expected %.7g)\n", i, out[i], expect);
  }
  return bad == 0 ? 0 : 1;
}

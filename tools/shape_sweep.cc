#include "shape_sweep.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>

#include "inputs.h"
#include "timing.h"

namespace brt::tools {

Expected<std::vector<std::map<std::string, int64_t>>> ParseShapeSweep(const std::string& text) {
  std::vector<std::map<std::string, int64_t>> shapes;
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(';', begin), text.size());
    auto symbols = ParseSymbols(text.substr(begin, end - begin));
    if (!symbols.ok())
      return Status(StatusCode::kInvalidArgument, "--shapes: " + symbols.status().message());
    if (symbols->empty())
      return Status(StatusCode::kInvalidArgument,
                    "--shapes takes sets of symbol values separated by ';' (b=1,s=16;b=1,s=128), "
                    "got an empty one in '" +
                        text + "'");
    shapes.push_back(std::move(symbols).value());
    begin = end + 1;
  }
  return shapes;
}

namespace {

std::string Label(const std::map<std::string, int64_t>& symbols) {
  std::string out;
  for (const auto& [name, value] : symbols)
    out += (out.empty() ? "" : ",") + name + "=" + std::to_string(value);
  return out;
}

}  // namespace

Status SweepShapes(Session& session, const FunctionInfo& fn,
                   const std::vector<std::map<std::string, int64_t>>& shapes, int warmup,
                   int64_t iters, uint64_t seed) {
  std::printf("shape sweep of %s (%lld timed runs each):\n", fn.name.c_str(),
              static_cast<long long>(iters));
  std::printf("  %-24s %12s %10s %10s %10s\n", "shape", "first run ms", "plan ms", "p50 ms",
              "p99 ms");
  for (const auto& symbols : shapes) {
    const std::string label = Label(symbols);
    auto failed = [&](const Status& s) {
      return Status(s.code(), "shape " + label + ": " + s.message());
    };
    std::mt19937_64 rng(seed);
    auto ctx = session.NewRequest(fn.name);
    if (!ctx.ok()) return failed(ctx.status());
    for (int k : fn.input_indices) {
      auto t = RandomTensor(fn.arguments[k], rng, symbols);
      if (!t.ok()) return failed(t.status());
      if (Status s = (*ctx)->Bind(k, *t); !s.ok()) return failed(s);
    }
    const int64_t misses = session.shape_plan_stats(fn.name).value().misses;
    const auto t0 = std::chrono::steady_clock::now();
    if (Status s = (*ctx)->Run(); !s.ok()) return failed(s);
    const double first_ms = Ms(std::chrono::steady_clock::now() - t0);
    const ShapePlanStats plans = session.shape_plan_stats(fn.name).value();
    // A shape seen before reuses its plan: "hit".
    char plan[32] = "hit";
    if (plans.misses > misses)
      std::snprintf(plan, sizeof(plan), "%.3f", static_cast<double>(plans.last_plan_ns) / 1e6);
    for (int w = 0; w < warmup; ++w)
      if (Status s = (*ctx)->Run(); !s.ok()) return failed(s);
    std::vector<double> times;
    for (int64_t i = 0; i < iters; ++i) {
      const auto start = std::chrono::steady_clock::now();
      if (Status s = (*ctx)->Run(); !s.ok()) return failed(s);
      times.push_back(Ms(std::chrono::steady_clock::now() - start));
    }
    std::sort(times.begin(), times.end());
    std::printf("  %-24s %12.3f %10s %10.4f %10.4f\n", label.c_str(), first_ms, plan,
                Percentile(times, 0.5), Percentile(times, 0.99));
  }
  return Status::Ok();
}

}  // namespace brt::tools

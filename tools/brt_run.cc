// brt-run: runs one function of a .brtx on .npy inputs and writes .npy outputs.
// Exit codes: 0 ok, 1 the run failed, 2 bad arguments or inputs,
// 3 the executable is malformed or cannot be loaded.
#include <sys/stat.h>
#include <algorithm>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "brt/session.h"
#include "inputs.h"
#include "npy.h"

namespace {

constexpr int kUsageError = 2;
constexpr int kExecutableError = 3;

const char kUsage[] =
    "usage: brt-run model.brtx [--function NAME] [--inputs a.npy b.npy ...] [--input "
    "NAME=file.npy]\n"
    "               [--random-inputs SEED [--symbols NAME=SIZE,...]] [--out DIR]\n"
    "               [--provider cpu|cuda|PATH[,...]]\n"
    "               [--all-ranks]\n"
    "Under mpirun each rank runs its part of a multi-rank program: \"{rank}\" in an input\n"
    "path becomes the rank, outputs are written as out<i>.rank<r>.npy, and only rank 0\n"
    "prints unless --all-ranks.\n";

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "brt-run: %s\n", message.c_str());
  return code;
}

std::string Summary(const brt::Tensor& t) {
  std::string s = std::string(brt::DTypeName(t.dtype())) + brt::FormatShape(t.shape());
  const int64_t n = t.num_elements();
  if (n == 0) return s + " (empty)";
  if (t.device().kind != brt::DeviceKind::kCpu)
    return s + " (on " + brt::DeviceKindName(t.device().kind) + ", not read)";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  auto visit = [&](auto* p) {
    for (int64_t i = 0; i < n; ++i) {
      const double v = static_cast<double>(p[i]);
      lo = std::min(lo, v), hi = std::max(hi, v), sum += v;
    }
  };
  switch (t.dtype()) {
    case brt::DType::kF32:
      visit(t.data_as<float>());
      break;
    case brt::DType::kF64:
      visit(t.data_as<double>());
      break;
    case brt::DType::kI32:
      visit(t.data_as<int32_t>());
      break;
    case brt::DType::kI64:
      visit(t.data_as<int64_t>());
      break;
    case brt::DType::kI8:
      visit(t.data_as<int8_t>());
      break;
    case brt::DType::kI16:
      visit(t.data_as<int16_t>());
      break;
    case brt::DType::kU16:
      visit(t.data_as<uint16_t>());
      break;
    case brt::DType::kU32:
      visit(t.data_as<uint32_t>());
      break;
    case brt::DType::kU64:
      visit(t.data_as<uint64_t>());
      break;
    case brt::DType::kU8:
    case brt::DType::kI1:
      visit(t.data_as<uint8_t>());
      break;
    default:
      return s;
  }
  char buf[160];
  std::snprintf(buf, sizeof(buf), " min=%.6g max=%.6g mean=%.6g", lo, hi,
                sum / static_cast<double>(n));
  return s + buf;
}

}  // namespace

int main(int argc, char** argv) {
  std::string model, function, out_dir, provider = "cpu";
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> named;
  std::optional<uint64_t> seed;
  std::map<std::string, int64_t> symbols;  // --symbols: sizes of random inputs' symbolic dims
  bool all_ranks = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      return std::string(argv[++i]);
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (a == "--function" || a == "--out" || a == "--provider" || a == "--random-inputs" ||
               a == "--input" || a == "--symbols") {
      auto v = value();
      if (!v) return Fail(kUsageError, a + " needs a value\n" + kUsage);
      if (a == "--function") function = *v;
      if (a == "--out") out_dir = *v;
      if (a == "--provider") provider = *v;
      if (a == "--random-inputs") {
        try {
          seed = std::stoull(*v);
        } catch (...) {
          return Fail(kUsageError,
                      "--random-inputs takes a non-negative integer seed, got '" + *v + "'");
        }
      }
      if (a == "--symbols") {
        auto parsed = brt::tools::ParseSymbols(*v);
        if (!parsed.ok()) return Fail(kUsageError, parsed.status().message());
        symbols = *parsed;
      }
      if (a == "--input") {
        size_t eq = v->find('=');
        if (eq == std::string::npos || eq == 0)
          return Fail(kUsageError, "--input takes NAME=file.npy, got '" + *v + "'");
        named.emplace_back(v->substr(0, eq), v->substr(eq + 1));
      }
    } else if (a == "--all-ranks") {
      all_ranks = true;
    } else if (a == "--inputs") {
      while (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0)
        positional.push_back(argv[++i]);
    } else if (a.rfind("--", 0) == 0) {
      return Fail(kUsageError, "unknown option '" + a + "'\n" + kUsage);
    } else if (model.empty()) {
      model = a;
    } else {
      return Fail(kUsageError,
                  "unexpected argument '" + a + "' (input files go after --inputs)\n" + kUsage);
    }
  }
  if (model.empty()) return Fail(kUsageError, std::string("no model given\n") + kUsage);

  brt::SessionOptions options;
  // A comma-separated list: an executable placed on several devices needs
  // each device's provider (e.g. --provider cuda,cpu).
  options.providers.clear();
  for (size_t start = 0; start <= provider.size();) {
    const size_t comma = std::min(provider.find(',', start), provider.size());
    if (comma > start) options.providers.push_back(provider.substr(start, comma - start));
    start = comma + 1;
  }
  auto session = brt::Session::LoadFile(model, options);
  if (!session.ok()) {
    // 3: the executable itself is bad (malformed, newer format, an op nothing
    // can run); 2: the request is (missing file, unknown provider).
    const auto code = session.status().code();
    const bool bad_executable =
        code == brt::StatusCode::kInvalidExecutable || code == brt::StatusCode::kUnsupported;
    return Fail(bad_executable ? kExecutableError : kUsageError, session.status().message());
  }
  auto info = (*session)->function(function);
  if (!info.ok()) return Fail(kUsageError, info.status().message());
  const brt::FunctionInfo& fn = **info;
  const int rank = (*session)->rank(), world_size = (*session)->world_size();
  const bool quiet = world_size > 1 && rank != 0 && !all_ranks;
  const std::string prefix =
      world_size > 1 && all_ranks ? "[rank " + std::to_string(rank) + "] " : "";

  auto ctx = (*session)->NewRequest(fn.name);
  if (!ctx.ok()) return Fail(kUsageError, ctx.status().message());
  if (positional.size() > fn.input_indices.size())
    return Fail(kUsageError, "got " + std::to_string(positional.size()) +
                                 " input files but function '" + fn.name + "' takes " +
                                 std::to_string(fn.input_indices.size()) + " inputs");
  std::vector<bool> bound(fn.arguments.size(), false);
  auto bind_file = [&](int arg, const std::string& file) -> int {
    if (bound[arg])
      return Fail(kUsageError, "input '" + fn.arguments[arg].name + "' is given twice");
    auto t = brt::tools::ReadNpy(brt::tools::ForRank(file, rank));
    if (!t.ok())
      return Fail(kUsageError, "input '" + fn.arguments[arg].name + "': " + t.status().message());
    brt::Status s = (*ctx)->Bind(arg, *t, brt::Ownership::kRuntimeOwned);
    if (!s.ok()) return Fail(kUsageError, s.message() + " (from " + file + ")");
    bound[arg] = true;
    return 0;
  };
  for (size_t i = 0; i < positional.size(); ++i)
    if (int rc = bind_file(fn.input_indices[i], positional[i])) return rc;
  for (const auto& [name, file] : named) {
    int arg = -1;
    for (int k : fn.input_indices)
      if (fn.arguments[k].name == name) arg = k;
    if (arg < 0) {
      std::string names;
      for (int k : fn.input_indices) names += (names.empty() ? "" : ", ") + fn.arguments[k].name;
      return Fail(kUsageError, "function '" + fn.name + "' has no input named '" + name +
                                   "' (inputs: " + names + ")");
    }
    if (int rc = bind_file(arg, file)) return rc;
  }
  std::mt19937_64 rng(seed.value_or(0));
  std::vector<std::string> missing;
  for (int k : fn.input_indices) {
    if (bound[k]) continue;
    if (!seed) {
      missing.push_back(fn.arguments[k].name);
      continue;
    }
    auto t = brt::tools::RandomTensor(fn.arguments[k], rng, symbols);
    if (!t.ok()) return Fail(kUsageError, t.status().message());
    brt::Status s = (*ctx)->Bind(k, *t, brt::Ownership::kRuntimeOwned);
    if (!s.ok()) return Fail(kUsageError, s.message());
  }
  if (!missing.empty()) {
    std::string names;
    for (const auto& n : missing) names += (names.empty() ? "" : ", ") + n;
    return Fail(kUsageError, "missing inputs: " + names +
                                 " (use --inputs, --input NAME=file.npy or --random-inputs SEED)");
  }

  brt::Status run = (*ctx)->Run();
  if (!run.ok()) return Fail(1, run.message());
  if (!out_dir.empty()) ::mkdir(out_dir.c_str(), 0755);
  for (size_t i = 0; i < fn.output_indices.size(); ++i) {
    auto t = (*ctx)->OutputOnHost(fn.output_indices[i]);
    if (!t.ok()) return Fail(1, t.status().message());
    if (!quiet)
      std::printf("%sout%zu %s: %s\n", prefix.c_str(), i,
                  fn.arguments[fn.output_indices[i]].name.c_str(), Summary(*t).c_str());
    if (!out_dir.empty()) {
      const std::string path =
          brt::tools::RankSuffixed(out_dir + "/out" + std::to_string(i) + ".npy", rank, world_size);
      brt::Status s = brt::tools::WriteNpy(path, *t);
      if (!s.ok()) return Fail(1, s.message());
    }
  }
  return 0;
}

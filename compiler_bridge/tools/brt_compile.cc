// brt-compile: StableHLO (generic MLIR text) -> .brtx.
//   brt-compile in.mlir -o out.brtx [--target=cpu] [--dump-after-each DIR] [--stats]
//               [--all-reduce-bucket-bytes=N] [--check-passes [--check-seed=N]]
//               [--check-indices]
//   brt-compile NAME=a.mlir NAME2=b.mlir ... -o out.brtx   one function per input
//               (e.g. one per input shape), sharing equal weights
//   brt-compile --list-ops   the StableHLO and CHLO ops it imports, one a line
// Errors are one line "<location>: <message>" and exit code 1 (2 for usage).
#include <sys/stat.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "BrtDialect.h"
#include "brt/op_registry.h"
#include "brt/session.h"
#include "codegen/CudaCodegen.h"
#include "import/Import.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/MLIRContext.h"
#include "passes/CheckPasses.h"
#include "passes/Passes.h"
#include "serialize/Serialize.h"

namespace {

const char kUsage[] =
    "usage: brt-compile in.mlir -o out.brtx [--target=cpu|cuda] [--dump-after-each DIR] "
    "[--stats] [--all-reduce-bucket-bytes=N] [--overlap-min-rows=N] [--unroll-max-ops=N] "
    "[--check-passes [--check-seed=N]] [--check-indices]\n"
    "       brt-compile NAME=in.mlir [NAME2=in2.mlir ...] -o out.brtx [options]\n"
    "                               one function NAME per input (its main), equal weights\n"
    "                               stored once\n"
    "  --all-reduce-bucket-bytes=N  pack all_reduces of gradients made one after another into\n"
    "                               buckets of about N bytes (default 65536; 0: one each)\n"
    "  --overlap-min-rows=N         fuse an all_gather or reduce_scatter with its matmul (to\n"
    "                               overlap them) only from N rows per rank (default: 512\n"
    "                               for cuda, 0 for cpu)\n"
    "  --unroll-max-ops=N           unroll a while loop whose trip count is known when trips x\n"
    "                               its body's ops is at most N (default 256); any other\n"
    "                               loop runs as a loop\n"
    "  --check-passes               run the program on the CPU provider on random inputs after\n"
    "                               import and after each pass, name the first pass that\n"
    "                               changes a result and exit 1 (--target=cuda: the passes\n"
    "                               before 'place'); else write the executable as usual\n"
    "  --check-seed=N               the random inputs' seed for --check-passes (default 0)\n"
    "  --check-indices              a run with a gather or scatter index out of range fails,\n"
    "                               naming the op (PyTorch's meaning; StableHLO clamps a\n"
    "                               gather's and drops a scatter's; brt.compile_torch sets it\n"
    "                               for --target=cpu)\n"
    "       brt-compile --list-ops      the StableHLO and CHLO ops it imports, one a line\n";

int Usage(const std::string& why) {
  std::fprintf(stderr, "brt-compile: %s\n%s", why.c_str(), kUsage);
  return 2;
}

bool Dump(const std::string& dir, const std::string& name, mlir::ModuleOp module) {
  ::mkdir(dir.c_str(), 0755);
  std::error_code ec;
  llvm::raw_fd_ostream os(dir + "/" + name, ec);
  if (ec) return false;
  module.print(os);
  return true;
}

// "--name=N" with N a count >= 0 (`what` says of what) into *value; else
// says so with the usage and returns false.
bool CountOption(const std::string& arg, const char* what, long long* value) {
  const size_t eq = arg.find('=') + 1;
  char* end = nullptr;
  *value = std::strtoll(arg.c_str() + eq, &end, 10);
  if (arg.size() > eq && *end == '\0' && *value >= 0) return true;
  Usage(arg.substr(0, eq - 1) + " needs " + what + " >= 0, got '" + arg.substr(eq) + "'");
  return false;
}

const char kCudaArch[] = "compute_80";  // PTX runs on sm_80 and newer

// One input: the function's name and the file of its StableHLO.
struct Input {
  std::string function, path;
};

struct Options {
  std::string target = "cpu";
  long long bucket_bytes = 65536;
  long long overlap_min_rows = -1;  // the target's default
  long long unroll_max_ops = brt::bridge::ImportOptions{}.unroll_max_ops;
  bool check_passes = false;
  uint64_t check_seed = 0;
  bool check_indices = false;
};

// `function`: the executable function the module becomes ("" for the only one).
brt::bridge::PipelineOptions PipelineOf(const Options& options, const std::string& function) {
  return {.target = options.target,
          .cuda_arch = kCudaArch,
          .kernel_prefix = function,
          .all_reduce_bucket_bytes = options.bucket_bytes,
          .overlap_min_rows = options.overlap_min_rows};
}

// --check-passes on the imported `module`: a line per step on stdout;
// returns false, having said why on stderr, when a step changes a result or
// the program cannot be checked. `function` names the input when there are
// several.
bool CheckPassesOf(mlir::ModuleOp module, const Options& options, const std::string& function) {
  const std::string prefix = "--check-passes: " + (function.empty() ? "" : function + ": ");
  if (options.target == "cuda")
    std::printf(
        "%s--target=cuda: the steps before 'place' run on the CPU provider; 'place' and "
        "'generate-cuda-kernels' are not checked\n",
        prefix.c_str());
  brt::bridge::CheckPassesReport report = brt::bridge::CheckPasses(
      module, brt::bridge::CheckedPipeline(PipelineOf(options, function)), options.check_seed);
  if (report.runtime_ops)
    std::printf("%safter import: %d runtime ops, inputs from seed %" PRIu64 "\n", prefix.c_str(),
                report.runtime_ops, options.check_seed);
  for (const brt::bridge::CheckedStep& step : report.steps)
    if (step.program_changed)
      std::printf("%sstep %2d %-24s max abs difference %-10.3g (%d runtime ops)\n", prefix.c_str(),
                  step.number, step.name.c_str(), step.max_abs_difference, step.runtime_ops);
    else
      std::printf("%sstep %2d %-24s program unchanged\n", prefix.c_str(), step.number,
                  step.name.c_str());
  std::fflush(stdout);
  if (!report.error.empty())
    return std::fprintf(stderr, "brt-compile: %s%s\n", prefix.c_str(), report.error.c_str()), false;
  if (report.change)
    return std::fprintf(stderr, "brt-compile: %s%s\n", prefix.c_str(),
                        brt::bridge::Describe(*report.change, options.check_seed).c_str()),
           false;
  std::printf("%sno step changes the results\n", prefix.c_str());
  return true;
}

// Imports `input`, checks the passes if asked, runs the pipeline on it; on
// failure prints the error and returns nothing. `function` names the input
// when there are several.
mlir::OwningOpRef<mlir::ModuleOp> Compile(mlir::MLIRContext& context, const Input& input,
                                          const Options& options, const std::string& function,
                                          const std::string& dump_dir, int* source_ops,
                                          std::string* skipped_steps) {
  std::ifstream in(input.path);
  if (!in)
    return std::fprintf(stderr, "brt-compile: cannot open '%s'\n", input.path.c_str()), nullptr;
  std::stringstream text;
  text << in.rdbuf();
  brt::bridge::ImportResult imported = brt::bridge::ImportStableHlo(
      context, text.str(), input.path, {.unroll_max_ops = options.unroll_max_ops});
  if (!imported.module)
    return std::fprintf(stderr, "brt-compile: %s\n", imported.error.c_str()), nullptr;
  *source_ops = imported.source_ops;
  if (!dump_dir.empty() && !Dump(dump_dir, "00-import.mlir", *imported.module))
    return std::fprintf(stderr, "brt-compile: cannot write to '%s'\n", dump_dir.c_str()), nullptr;
  if (options.check_passes && !CheckPassesOf(*imported.module, options, function)) return nullptr;
  std::vector<brt::bridge::PipelineStep> steps;
  if (options.check_indices)
    steps.push_back({"check-indices", brt::bridge::createCheckIndices(), true});
  for (brt::bridge::PipelineStep& step :
       brt::bridge::CompilerPipeline(PipelineOf(options, function)))
    steps.push_back(std::move(step));
  int step_number = 1;
  const bool symbolic = brt::bridge::HasSymbolicSizes(*imported.module);
  for (brt::bridge::PipelineStep& step : steps) {
    if (symbolic && !step.on_symbolic_sizes)
      *skipped_steps += (skipped_steps->empty() ? "" : ", ") + step.name;
    if (std::string failed = brt::bridge::RunPipelineStep(*imported.module, step); !failed.empty())
      return std::fprintf(stderr, "brt-compile: %s\n", failed.c_str()), nullptr;
    char file[64];
    std::snprintf(file, sizeof(file), "%02d-%s.mlir", step_number++, step.name.c_str());
    if (!dump_dir.empty() && !Dump(dump_dir, file, *imported.module))
      return std::fprintf(stderr, "brt-compile: cannot write to '%s'\n", dump_dir.c_str()), nullptr;
  }
  return std::move(imported.module);
}

// What compiles for --target=cpu must load: the executable at `path` is
// loaded as a Session would load it (every op resolved to a CPU kernel and
// prepared), so an op the CPU provider cannot run fails the compile, not
// the user's first load. A program with collectives needs its world of
// ranks to load and is left to it; so is a build without the CPU plugin.
brt::Status LoadsOnCpu(const std::string& path) {
  if (!brt::ListProviderKernels("cpu").ok()) return brt::Status::Ok();
  std::ifstream file(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  auto loaded = brt::Session::LoadMemory(bytes);
  if (loaded.ok()) return brt::Status::Ok();
  return brt::Status(
      loaded.status().code(),
      "--target=cpu: the CPU provider cannot run this program: " + loaded.status().message());
}

}  // namespace

int main(int argc, char** argv) {
  std::string output, dump_dir;
  std::vector<Input> inputs;
  bool stats = false, seed_given = false;
  Options compile;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") return std::fputs(kUsage, stdout), 0;
    if (a == "--list-ops") {
      for (const std::string& name : brt::bridge::ImportedOpNames()) std::puts(name.c_str());
      return 0;
    }
    if (a == "-o" && i + 1 < argc)
      output = argv[++i];
    else if (a.rfind("--target=", 0) == 0)
      compile.target = a.substr(9);
    else if (a == "--dump-after-each" && i + 1 < argc)
      dump_dir = argv[++i];
    else if (a == "--stats")
      stats = true;
    else if (a == "--check-indices")
      compile.check_indices = true;
    else if (a == "--check-passes")
      compile.check_passes = true;
    else if (a.rfind("--all-reduce-bucket-bytes=", 0) == 0) {
      if (!CountOption(a, "a byte count", &compile.bucket_bytes)) return 2;
    } else if (a.rfind("--overlap-min-rows=", 0) == 0) {
      if (!CountOption(a, "a row count", &compile.overlap_min_rows)) return 2;
    } else if (a.rfind("--unroll-max-ops=", 0) == 0) {
      if (!CountOption(a, "an op count", &compile.unroll_max_ops)) return 2;
    } else if (a.rfind("--check-seed=", 0) == 0) {
      char* end = nullptr;
      compile.check_seed = std::strtoull(a.c_str() + 13, &end, 10);
      if (a.size() == 13 || *end != '\0' || a[13] == '-')
        return Usage("--check-seed needs a number >= 0, got '" + a.substr(13) + "'");
      seed_given = true;
    } else if (a.rfind("-", 0) == 0) {
      return Usage("unknown option '" + a + "'");
    } else if (const size_t eq = a.find('='); eq != std::string::npos && eq > 0) {
      inputs.push_back({a.substr(0, eq), a.substr(eq + 1)});
    } else {
      inputs.push_back({"main", a});
    }
  }
  if (inputs.empty() || output.empty()) return Usage("need an input file and -o OUTPUT");
  std::set<std::string> names;
  for (const Input& in : inputs)
    if (!names.insert(in.function).second)
      return Usage(inputs.size() == 1 || in.function != "main"
                       ? "function name '" + in.function + "' is given twice"
                       : "several inputs need a function name each: NAME=in.mlir");
  if (seed_given && !compile.check_passes) return Usage("--check-seed is for --check-passes");
  if (compile.target != "cpu" && compile.target != "cuda")
    return Usage("--target must be cpu or cuda, got '" + compile.target + "'");
  // brt.check_indices runs on the CPU: on CUDA it would copy every gather's
  // indices to the host and back, and stop CUDA graphs.
  if (compile.check_indices && compile.target != "cpu")
    return Usage("--check-indices is for --target=cpu (the check runs on the host)");
  if (compile.target == "cuda" && !brt::bridge::NvrtcBuiltIn())
    return std::fprintf(stderr, "brt-compile: --target=cuda: %s\n", brt::bridge::kNoNvrtc), 1;

  mlir::MLIRContext context;
  brt::bridge::PrepareContext(context);
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  std::vector<std::pair<std::string, mlir::ModuleOp>> functions;
  std::vector<int> source_ops(inputs.size(), 0);
  std::vector<std::string> skipped_steps(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string dir =
        dump_dir.empty() || inputs.size() == 1 ? dump_dir : dump_dir + "/" + inputs[i].function;
    if (!dir.empty() && dir != dump_dir) ::mkdir(dump_dir.c_str(), 0755);
    modules.push_back(Compile(context, inputs[i], compile,
                              inputs.size() > 1 ? inputs[i].function : std::string(), dir,
                              &source_ops[i], &skipped_steps[i]));
    if (!modules.back()) return 1;
    functions.emplace_back(inputs[i].function, *modules.back());
  }

  brt::BuildReport report;
  brt::bridge::SerializeReport serialized;
  brt::bridge::SerializeOptions options;
  options.target = compile.target;
  if (!dump_dir.empty()) {
    options.kernel_dump_dir = dump_dir + "/kernels";
    ::mkdir(dump_dir.c_str(), 0755);
    ::mkdir(options.kernel_dump_dir.c_str(), 0755);
  }
  brt::Status s = brt::bridge::SerializeModules(functions, "brt-compile", output, options, &report,
                                                &serialized);
  if (!s.ok()) return std::fprintf(stderr, "brt-compile: %s\n", s.message().c_str()), 1;
  const bool collectives = llvm::any_of(functions, [](const auto& f) {
    bool found = false;
    mlir::ModuleOp module = f.second;
    module.walk([&](brt::bridge::BrtOp op) {
      const brt::OpSchema* schema = brt::FindOpSchema(op.getKind());
      found = found || (schema && (schema->flags & brt::op_flags::kCollective));
    });
    return found;
  });
  if (compile.target == "cpu" && !collectives) {
    if (brt::Status loads = LoadsOnCpu(output); !loads.ok()) {
      std::remove(output.c_str());
      return std::fprintf(stderr, "brt-compile: %s\n", loads.message().c_str()), 1;
    }
  }
  if (stats) {
    for (size_t i = 0; i < inputs.size(); ++i)
      std::printf("%s%sstablehlo ops: %d (after import, before fusion)\n",
                  inputs.size() > 1 ? inputs[i].function.c_str() : "",
                  inputs.size() > 1 ? ": " : "", source_ops[i]);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!skipped_steps[i].empty())
        std::printf("%s%spasses not written for symbolic sizes, not run: %s\n",
                    inputs.size() > 1 ? inputs[i].function.c_str() : "",
                    inputs.size() > 1 ? ": " : "", skipped_steps[i].c_str());
    if (compile.target == "cuda")
      std::printf("generated CUDA kernels: %d (PTX %s, %zu bytes)\n", serialized.kernels, kCudaArch,
                  serialized.ptx_bytes);
    if (serialized.state_in_place + serialized.state_copied)
      std::printf(
          "state: %d donated arguments, %d written in place, %d through a copy after "
          "the last op\n",
          serialized.state_in_place + serialized.state_copied, serialized.state_in_place,
          serialized.state_copied);
    for (const auto& f : report.functions)
      std::printf(
          "function %s: %d runtime ops; planned arena %lld bytes; lower bound %lld bytes live at "
          "once, "
          "%lld with 256-byte aligned values; planned / aligned bound = %.3f; %d results in "
          "an operand's bytes (reshapes, in-place ops)\n",
          f.name.c_str(), f.num_ops, static_cast<long long>(f.arena_bytes),
          static_cast<long long>(f.live_bytes_lower_bound),
          static_cast<long long>(f.aligned_lower_bound),
          f.aligned_lower_bound ? static_cast<double>(f.arena_bytes) / f.aligned_lower_bound : 1.0,
          f.shared_results);
  }
  return 0;
}

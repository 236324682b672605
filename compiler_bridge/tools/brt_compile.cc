// brt-compile: StableHLO (generic MLIR text) -> .brtx.
//   brt-compile in.mlir -o out.brtx [--target=cpu] [--dump-after-each DIR] [--stats]
//               [--all-reduce-bucket-bytes=N]
//   brt-compile NAME=a.mlir NAME2=b.mlir ... -o out.brtx   one function per input
//               (e.g. one per input shape), sharing equal weights
//   brt-compile --list-ops   the StableHLO and CHLO ops it imports, one a line
// Errors are one line "<location>: <message>" and exit code 1 (2 for usage).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "codegen/CudaCodegen.h"
#include "import/Import.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "passes/Passes.h"
#include "serialize/Serialize.h"

namespace {

const char kUsage[] =
    "usage: brt-compile in.mlir -o out.brtx [--target=cpu|cuda] [--dump-after-each DIR] "
    "[--stats] [--all-reduce-bucket-bytes=N]\n"
    "       brt-compile NAME=in.mlir [NAME2=in2.mlir ...] -o out.brtx [options]\n"
    "                               one function NAME per input (its main), equal weights\n"
    "                               stored once\n"
    "  --all-reduce-bucket-bytes=N  pack all_reduces of gradients made one after another into\n"
    "                               buckets of about N bytes (default 65536; 0: one each)\n"
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

const char kCudaArch[] = "compute_80";  // PTX runs on sm_80 and newer

// One input: the function's name and the file of its StableHLO.
struct Input {
  std::string function, path;
};

// Imports `input`, runs the pipeline on it; on failure prints the error and
// returns nothing.
mlir::OwningOpRef<mlir::ModuleOp> Compile(mlir::MLIRContext& context, const Input& input,
                                          const std::string& target, long long bucket_bytes,
                                          const std::string& dump_dir, int* source_ops) {
  std::ifstream in(input.path);
  if (!in)
    return std::fprintf(stderr, "brt-compile: cannot open '%s'\n", input.path.c_str()), nullptr;
  std::stringstream text;
  text << in.rdbuf();
  brt::bridge::ImportResult imported =
      brt::bridge::ImportStableHlo(context, text.str(), input.path);
  if (!imported.module)
    return std::fprintf(stderr, "brt-compile: %s\n", imported.error.c_str()), nullptr;
  *source_ops = imported.source_ops;
  if (!dump_dir.empty() && !Dump(dump_dir, "00-import.mlir", *imported.module))
    return std::fprintf(stderr, "brt-compile: cannot write to '%s'\n", dump_dir.c_str()), nullptr;
  int step_number = 1;
  for (brt::bridge::PipelineStep& step :
       brt::bridge::CompilerPipeline(target, kCudaArch, bucket_bytes)) {
    mlir::PassManager pm(&context);
    if (step.pass->getOpName() == mlir::ModuleOp::getOperationName())
      pm.addPass(std::move(step.pass));
    else
      pm.addNestedPass<mlir::func::FuncOp>(std::move(step.pass));
    std::string diagnostic;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic& d) {
      if (diagnostic.empty()) {
        llvm::raw_string_ostream os(diagnostic);
        d.getLocation().print(os);
        os << ": " << d.str();
      }
      return mlir::success();
    });
    if (mlir::failed(pm.run(*imported.module)))
      return std::fprintf(stderr, "brt-compile: %s\n",
                          diagnostic.empty() ? ("pass '" + step.name + "' failed").c_str()
                                             : diagnostic.c_str()),
             nullptr;
    char file[64];
    std::snprintf(file, sizeof(file), "%02d-%s.mlir", step_number++, step.name.c_str());
    if (!dump_dir.empty() && !Dump(dump_dir, file, *imported.module))
      return std::fprintf(stderr, "brt-compile: cannot write to '%s'\n", dump_dir.c_str()), nullptr;
  }
  return std::move(imported.module);
}

}  // namespace

int main(int argc, char** argv) {
  std::string output, target = "cpu", dump_dir;
  std::vector<Input> inputs;
  bool stats = false;
  long long bucket_bytes = 65536;
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
      target = a.substr(9);
    else if (a == "--dump-after-each" && i + 1 < argc)
      dump_dir = argv[++i];
    else if (a == "--stats")
      stats = true;
    else if (a.rfind("--all-reduce-bucket-bytes=", 0) == 0) {
      char* end = nullptr;
      bucket_bytes = std::strtoll(a.c_str() + 26, &end, 10);
      if (a.size() == 26 || *end != '\0' || bucket_bytes < 0)
        return Usage("--all-reduce-bucket-bytes needs a byte count >= 0, got '" + a.substr(26) +
                     "'");
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
  if (target != "cpu" && target != "cuda")
    return Usage("--target must be cpu or cuda, got '" + target + "'");
  if (target == "cuda" && !brt::bridge::NvrtcBuiltIn())
    return std::fprintf(stderr, "brt-compile: --target=cuda: %s\n", brt::bridge::kNoNvrtc), 1;

  mlir::MLIRContext context;
  brt::bridge::PrepareContext(context);
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> modules;
  std::vector<std::pair<std::string, mlir::ModuleOp>> functions;
  std::vector<int> source_ops(inputs.size(), 0);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string dir =
        dump_dir.empty() || inputs.size() == 1 ? dump_dir : dump_dir + "/" + inputs[i].function;
    if (!dir.empty() && dir != dump_dir) ::mkdir(dump_dir.c_str(), 0755);
    modules.push_back(Compile(context, inputs[i], target, bucket_bytes, dir, &source_ops[i]));
    if (!modules.back()) return 1;
    functions.emplace_back(inputs[i].function, *modules.back());
  }

  brt::BuildReport report;
  brt::bridge::SerializeReport serialized;
  brt::bridge::SerializeOptions options;
  options.target = target;
  if (!dump_dir.empty()) {
    options.kernel_dump_dir = dump_dir + "/kernels";
    ::mkdir(dump_dir.c_str(), 0755);
    ::mkdir(options.kernel_dump_dir.c_str(), 0755);
  }
  brt::Status s = brt::bridge::SerializeModules(functions, "brt-compile", output, options, &report,
                                                &serialized);
  if (!s.ok()) return std::fprintf(stderr, "brt-compile: %s\n", s.message().c_str()), 1;
  if (stats) {
    for (size_t i = 0; i < inputs.size(); ++i)
      std::printf("%s%sstablehlo ops: %d (after import, before fusion)\n",
                  inputs.size() > 1 ? inputs[i].function.c_str() : "",
                  inputs.size() > 1 ? ": " : "", source_ops[i]);
    if (target == "cuda")
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

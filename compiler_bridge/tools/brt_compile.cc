// brt-compile: StableHLO (generic MLIR text) -> .brtx.
//   brt-compile in.mlir -o out.brtx [--target=cpu] [--dump-after-each DIR] [--stats]
//               [--all-reduce-bucket-bytes=N]
//   brt-compile --list-ops   the StableHLO and CHLO ops it imports, one a line
// Errors are one line "<location>: <message>" and exit code 1 (2 for usage).
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  std::string input, output, target = "cpu", dump_dir;
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
    } else if (a.rfind("-", 0) == 0)
      return Usage("unknown option '" + a + "'");
    else if (input.empty())
      input = a;
    else
      return Usage("more than one input file");
  }
  if (input.empty() || output.empty()) return Usage("need an input file and -o OUTPUT");
  if (target != "cpu" && target != "cuda")
    return Usage("--target must be cpu or cuda, got '" + target + "'");
  if (target == "cuda" && !brt::bridge::NvrtcBuiltIn())
    return std::fprintf(stderr, "brt-compile: --target=cuda: %s\n", brt::bridge::kNoNvrtc), 1;

  std::ifstream in(input);
  if (!in) return std::fprintf(stderr, "brt-compile: cannot open '%s'\n", input.c_str()), 1;
  std::stringstream text;
  text << in.rdbuf();

  mlir::MLIRContext context;
  brt::bridge::PrepareContext(context);
  brt::bridge::ImportResult imported = brt::bridge::ImportStableHlo(context, text.str(), input);
  if (!imported.module) return std::fprintf(stderr, "brt-compile: %s\n", imported.error.c_str()), 1;
  if (!dump_dir.empty() && !Dump(dump_dir, "00-import.mlir", *imported.module))
    return std::fprintf(stderr, "brt-compile: cannot write to '%s'\n", dump_dir.c_str()), 1;
  int step_number = 1;
  const std::string cuda_arch = "compute_80";  // PTX runs on sm_80 and newer
  for (brt::bridge::PipelineStep& step :
       brt::bridge::CompilerPipeline(target, cuda_arch, bucket_bytes)) {
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
             1;
    char file[64];
    std::snprintf(file, sizeof(file), "%02d-%s.mlir", step_number++, step.name.c_str());
    if (!dump_dir.empty() && !Dump(dump_dir, file, *imported.module))
      return std::fprintf(stderr, "brt-compile: cannot write to '%s'\n", dump_dir.c_str()), 1;
  }

  brt::BuildReport report;
  brt::bridge::SerializeReport serialized;
  brt::bridge::SerializeOptions options;
  options.target = target;
  if (!dump_dir.empty()) {
    options.kernel_dump_dir = dump_dir + "/kernels";
    ::mkdir(options.kernel_dump_dir.c_str(), 0755);
  }
  brt::Status s = brt::bridge::SerializeModule(*imported.module, "brt-compile", output, options,
                                               &report, &serialized);
  if (!s.ok()) return std::fprintf(stderr, "brt-compile: %s\n", s.message().c_str()), 1;
  if (stats) {
    std::printf("stablehlo ops: %d (after import, before fusion)\n", imported.source_ops);
    if (target == "cuda")
      std::printf("generated CUDA kernels: %d (PTX %s, %zu bytes)\n", serialized.kernels,
                  cuda_arch.c_str(), serialized.ptx_bytes);
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
          "%lld with 256-byte aligned values; planned / aligned bound = %.3f\n",
          f.name.c_str(), f.num_ops, static_cast<long long>(f.arena_bytes),
          static_cast<long long>(f.live_bytes_lower_bound),
          static_cast<long long>(f.aligned_lower_bound),
          f.aligned_lower_bound ? static_cast<double>(f.arena_bytes) / f.aligned_lower_bound : 1.0);
  }
  return 0;
}

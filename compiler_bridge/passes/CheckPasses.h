// brt-compile --check-passes: a differential check of the compiler's passes.
// The imported program runs on the CPU provider on seeded random inputs, and
// again after each pipeline step; the first step after which a result moves
// beyond its dtype's tolerance is named, with the output and the element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "passes/Passes.h"

namespace brt::bridge {

// A step after which every result stayed within tolerance.
struct CheckedStep {
  int number = 0;  // 1 for the first step, as --dump-after-each numbers its dumps
  std::string name;
  bool program_changed = false;  // false: the pass left the program as it was, so it did not run
  int runtime_ops = 0;
  double max_abs_difference = 0;  // over every output, against the results after import
};

// The first step after which a result changed.
struct ResultChange {
  int number = 0;
  std::string name;
  std::string output;             // the executable's name of the output ("result0")
  std::vector<int64_t> element;   // its index in the output; empty for a scalar
  std::string before, after;      // the element after import and after the step
  double max_abs_difference = 0;  // over that output
};

struct CheckPassesReport {
  // Why the check stopped short of comparing: the program cannot be checked,
  // a pass failed (its diagnostic), or the program no longer runs; else empty.
  std::string error;
  int runtime_ops = 0;                 // after import; 0 when the program did not run
  std::vector<CheckedStep> steps;      // the steps that kept the results, in order
  std::optional<ResultChange> change;  // the step that did not
  bool passed() const { return error.empty() && !change; }
};

// Runs `steps` in order on a copy of `imported` (the importer's module: one
// func.func @main), running the program on the CPU provider after import and
// after each step on the same inputs, drawn from `seed`: floats from a
// standard normal distribution, signed integers in [-4, 4], unsigned ones in
// [0, 8], i1 either way. Donated arguments (state) start from the same
// values in every run. Results match when they are equal for integers and
// i1, and, for floats, within a relative tolerance plus an absolute one
// scaled by the output's largest finite magnitude after import (1e-5 each
// for f32, 1e-2 for f16, 5e-2 for bf16, 1e-10 for f64); NaN matches NaN.
// Stops at the first step that changes a result. Refuses programs that
// exchange data between ranks (collectives, per-rank programs).
CheckPassesReport CheckPasses(mlir::ModuleOp imported, std::vector<PipelineStep> steps,
                              uint64_t seed);

// The steps brt-compile --check-passes checks for `target`: CompilerPipeline's;
// for cuda those before 'place', which puts ops on the GPU.
std::vector<PipelineStep> CheckedPipeline(const PipelineOptions& options);

// "results change after pass 'simplify' (step 4): output 'result0' element
// [3, 1]: 0.25 before, -0.25 after (max abs difference 0.5; inputs from seed 0)"
std::string Describe(const ResultChange& change, uint64_t seed);

}  // namespace brt::bridge

// brt-compile --check-passes: the program runs on the CPU provider (serialized
// in memory and loaded with Session::LoadMemory, as fold-constants runs its
// one-op programs) after import and after each step, and the results are
// compared with those after import.
#include "passes/CheckPasses.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>

#include "BrtDialect.h"
#include "brt/op_registry.h"
#include "brt/session.h"
#include "import/OpText.h"
#include "import/PerRank.h"
#include "llvm/ADT/APFloat.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/OperationSupport.h"
#include "serialize/Serialize.h"

namespace brt::bridge {
namespace {

// A loop still running after this many iterations on the random inputs
// stops the check with an error naming it.
constexpr int64_t kCheckedLoopIterations = 100000;

bool IsFloat(DType d) {
  return d == DType::kF32 || d == DType::kF64 || d == DType::kF16 || d == DType::kBF16;
}

// How far a float result may move: relative to the element after import,
// plus `absolute` times the output's largest finite magnitude after import.
struct Tolerance {
  double relative, absolute;
};
Tolerance ToleranceOf(DType d) {
  switch (d) {
    case DType::kF64:
      return {1e-10, 1e-10};
    case DType::kF32:
      return {1e-5, 1e-5};
    case DType::kF16:
      return {1e-2, 1e-2};
    case DType::kBF16:
      return {5e-2, 5e-2};
    default:
      return {0, 0};
  }
}

uint16_t SmallFloatBits(float f, const llvm::fltSemantics& semantics) {
  llvm::APFloat v(f);
  bool lost = false;
  v.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(v.bitcastToAPInt().getZExtValue());
}

float SmallFloatValue(uint16_t bits, const llvm::fltSemantics& semantics) {
  llvm::APFloat v(semantics, llvm::APInt(16, bits));
  bool lost = false;
  v.convert(llvm::APFloat::IEEEsingle(), llvm::APFloat::rmNearestTiesToEven, &lost);
  return v.convertToFloat();
}

// Element i of a host tensor as a double (i1: 0 or 1).
double ValueAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kF32:
      return t.data_as<float>()[i];
    case DType::kF64:
      return t.data_as<double>()[i];
    case DType::kF16:
      return SmallFloatValue(t.data_as<uint16_t>()[i], llvm::APFloat::IEEEhalf());
    case DType::kBF16:
      return SmallFloatValue(t.data_as<uint16_t>()[i], llvm::APFloat::BFloat());
    case DType::kI1:
      return t.data_as<uint8_t>()[i] != 0;
    case DType::kI8:
      return t.data_as<int8_t>()[i];
    case DType::kI16:
      return t.data_as<int16_t>()[i];
    case DType::kI32:
      return t.data_as<int32_t>()[i];
    case DType::kI64:
      return static_cast<double>(t.data_as<int64_t>()[i]);
    case DType::kU8:
      return t.data_as<uint8_t>()[i];
    case DType::kU16:
      return t.data_as<uint16_t>()[i];
    case DType::kU32:
      return t.data_as<uint32_t>()[i];
    case DType::kU64:
      return static_cast<double>(t.data_as<uint64_t>()[i]);
    default:
      return 0;
  }
}

std::string FormatElement(const Tensor& t, int64_t i) {
  char text[64];
  switch (t.dtype()) {
    case DType::kI1:
      return t.data_as<uint8_t>()[i] ? "true" : "false";
    case DType::kI64:
      return std::to_string(t.data_as<int64_t>()[i]);
    case DType::kU64:
      return std::to_string(t.data_as<uint64_t>()[i]);
    case DType::kF64:
      std::snprintf(text, sizeof(text), "%.17g", ValueAt(t, i));
      return text;
    default:
      std::snprintf(text, sizeof(text), "%.9g", ValueAt(t, i));
      return text;
  }
}

// Integers and i1 match exactly (i1: any non-zero byte is true).
bool SameInteger(const Tensor& a, const Tensor& b, int64_t i) {
  if (a.dtype() == DType::kI1) return ValueAt(a, i) == ValueAt(b, i);
  const size_t size = DTypeSize(a.dtype());
  return std::memcmp(static_cast<const uint8_t*>(a.data()) + i * size,
                     static_cast<const uint8_t*>(b.data()) + i * size, size) == 0;
}

// A complex tensor as its parts: f32 or f64, with a last dimension of 2.
Tensor ComplexParts(const Tensor& t) {
  std::vector<int64_t> shape = t.shape();
  shape.push_back(2);
  return Tensor::Borrow(t.data(), t.dtype() == DType::kC64 ? DType::kF32 : DType::kF64, shape);
}
bool IsComplex(DType dtype) { return dtype == DType::kC64 || dtype == DType::kC128; }

Tensor RandomTensor(const ArgumentInfo& info, std::mt19937_64& rng) {
  std::vector<int64_t> shape;
  for (const Dim& d : info.shape) shape.push_back(d.size);
  Tensor t = Tensor::Allocate(info.dtype, shape);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> signed_int(-4, 4), unsigned_int(0, 8), bit(0, 1);
  for (int64_t i = 0; i < t.num_elements(); ++i) switch (info.dtype) {
      case DType::kF32:
        t.data_as<float>()[i] = static_cast<float>(normal(rng));
        break;
      case DType::kF64:
        t.data_as<double>()[i] = normal(rng);
        break;
      case DType::kF16:
        t.data_as<uint16_t>()[i] =
            SmallFloatBits(static_cast<float>(normal(rng)), llvm::APFloat::IEEEhalf());
        break;
      case DType::kBF16:
        t.data_as<uint16_t>()[i] =
            SmallFloatBits(static_cast<float>(normal(rng)), llvm::APFloat::BFloat());
        break;
      case DType::kI1:
        t.data_as<uint8_t>()[i] = static_cast<uint8_t>(bit(rng));
        break;
      case DType::kI8:
        t.data_as<int8_t>()[i] = static_cast<int8_t>(signed_int(rng));
        break;
      case DType::kI16:
        t.data_as<int16_t>()[i] = static_cast<int16_t>(signed_int(rng));
        break;
      case DType::kI32:
        t.data_as<int32_t>()[i] = signed_int(rng);
        break;
      case DType::kI64:
        t.data_as<int64_t>()[i] = signed_int(rng);
        break;
      case DType::kU8:
        t.data_as<uint8_t>()[i] = static_cast<uint8_t>(unsigned_int(rng));
        break;
      case DType::kU16:
        t.data_as<uint16_t>()[i] = static_cast<uint16_t>(unsigned_int(rng));
        break;
      case DType::kU32:
        t.data_as<uint32_t>()[i] = static_cast<uint32_t>(unsigned_int(rng));
        break;
      case DType::kU64:
        t.data_as<uint64_t>()[i] = static_cast<uint64_t>(unsigned_int(rng));
        break;
      case DType::kC64:
      case DType::kC128: {
        Tensor parts = ComplexParts(t);
        const bool single = t.dtype() == DType::kC64;
        for (int64_t p = 2 * i; p < 2 * i + 2; ++p)
          single ? void(parts.data_as<float>()[p] = static_cast<float>(normal(rng)))
                 : void(parts.data_as<double>()[p] = normal(rng));
        break;
      }
      default:
        break;
    }
  return t;
}

// The program's outputs on the CPU provider, copied to memory of their own,
// and what they are called.
struct Results {
  std::vector<std::string> names;
  std::vector<Tensor> outputs;
  int runtime_ops = 0;
};

// The arguments a run binds (inputs and state), with their values.
struct Inputs {
  std::vector<ArgumentInfo> arguments;
  std::vector<Tensor> values;
};

// Runs `module` on `inputs`; with no values given, draws them from `rng`
// first (the run after import).
Expected<Results> Run(mlir::ModuleOp module, Inputs& inputs, std::mt19937_64& rng) {
  SerializeOptions options;  // everything on the CPU, as --target=cpu places it
  auto bytes = SerializeModulesToMemory({{"main", module}}, "brt-compile --check-passes", options);
  if (!bytes.ok()) return bytes.status();
  // Random inputs may keep a data-dependent loop running for ever.
  SessionOptions session_options;
  session_options.max_loop_iterations = kCheckedLoopIterations;
  auto session = Session::LoadMemory(*bytes, session_options);
  if (!session.ok()) return session.status();
  auto ctx = (*session)->NewRequest();
  if (!ctx.ok()) return ctx.status();
  const FunctionInfo& function = (*ctx)->function();
  if (inputs.arguments.empty())
    for (int a : function.input_indices) {
      inputs.arguments.push_back(function.arguments[a]);
      inputs.values.push_back(RandomTensor(function.arguments[a], rng));
    }
  for (size_t i = 0; i < inputs.arguments.size(); ++i) {
    const ArgumentInfo& info = inputs.arguments[i];
    // State is written in place: each run starts from a copy of its own.
    BRT_RETURN_IF_ERROR(
        (*ctx)->Bind(info.name, inputs.values[i],
                     info.role == ArgRole::kState ? Ownership::kCopied : Ownership::kBorrowed));
  }
  BRT_RETURN_IF_ERROR((*ctx)->Run());
  auto outputs = (*ctx)->Outputs();
  if (!outputs.ok()) return outputs.status();
  Results results;
  results.runtime_ops = function.num_ops;
  for (size_t i = 0; i < outputs->size(); ++i) {
    const Tensor& t = (*outputs)[i];
    Tensor copy = Tensor::Allocate(t.dtype(), t.shape());
    if (t.num_bytes()) std::memcpy(copy.data(), t.data(), t.num_bytes());
    results.outputs.push_back(std::move(copy));
    results.names.push_back(function.arguments[function.output_indices[i]].name);
  }
  return results;
}

// How far `got` is from `reference` (same dtype and shape): the largest
// difference, and the element out of tolerance with the largest (-1: none).
struct Difference {
  double max_abs = 0;
  int64_t worst = -1;
};
Difference Compare(const Tensor& reference, const Tensor& got) {
  if (IsComplex(reference.dtype())) {
    Difference parts = Compare(ComplexParts(reference), ComplexParts(got));
    if (parts.worst >= 0) parts.worst /= 2;
    return parts;
  }
  Difference diff;
  const int64_t n = reference.num_elements();
  const bool is_float = IsFloat(reference.dtype());
  const Tolerance tolerance = ToleranceOf(reference.dtype());
  double largest = 0;
  if (is_float)
    for (int64_t i = 0; i < n; ++i)
      if (const double r = ValueAt(reference, i); std::isfinite(r))
        largest = std::max(largest, std::abs(r));
  double worst_abs = -1;
  for (int64_t i = 0; i < n; ++i) {
    const double r = ValueAt(reference, i), g = ValueAt(got, i);
    double abs_diff;
    bool same;
    if (!is_float) {
      same = SameInteger(reference, got, i);
      abs_diff = same ? 0 : std::abs(g - r);
    } else if (std::isnan(r) || std::isnan(g) || std::isinf(r) || std::isinf(g)) {
      same = (std::isnan(r) && std::isnan(g)) || r == g;
      abs_diff = same ? 0 : INFINITY;
    } else {
      abs_diff = std::abs(g - r);
      same = abs_diff <= tolerance.relative * std::abs(r) + tolerance.absolute * largest;
    }
    diff.max_abs = std::max(diff.max_abs, abs_diff);
    if (!same && abs_diff > worst_abs) diff.worst = i, worst_abs = abs_diff;
  }
  return diff;
}

std::vector<int64_t> Unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

// Why one process cannot run `module`, or "".
std::string Unrunnable(mlir::ModuleOp module) {
  auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
  if (!main) return "the module has no function 'main'";
  if (auto mesh = main->getAttrOfType<mlir::StringAttr>(kMeshAttr))
    return "it is a per-rank program (device mesh " + mesh.str() +
           "), which runs as one process per rank";
  std::string why;
  main.walk([&](BrtOp k) {
    const OpSchema* schema = FindOpSchema(k.getKind());
    if (schema && (schema->flags & op_flags::kCollective)) {
      why = "'" + k.getKind().str() + "' at " + Where(k->getLoc()) +
            " is a collective: it needs the program's ranks, and the check runs one process";
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return why;
}

}  // namespace

CheckPassesReport CheckPasses(mlir::ModuleOp imported, std::vector<PipelineStep> steps,
                              uint64_t seed) {
  CheckPassesReport report;
  if (std::string why = Unrunnable(imported); !why.empty()) {
    report.error = "cannot check this program: " + why;
    return report;
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = imported.clone();
  std::mt19937_64 rng(seed);
  Inputs inputs;
  auto reference = Run(*module, inputs, rng);
  if (!reference.ok()) {
    report.error =
        "the imported program does not run on the CPU provider: " + reference.status().message();
    return report;
  }
  report.runtime_ops = reference->runtime_ops;
  CheckedStep last{0, "import", true, reference->runtime_ops, 0};
  mlir::OperationFingerPrint fingerprint(*module);
  for (size_t s = 0; s < steps.size(); ++s) {
    CheckedStep step = last;
    step.number = static_cast<int>(s) + 1;
    step.name = steps[s].name;
    if (std::string failed = RunPipelineStep(*module, steps[s]); !failed.empty()) {
      report.error = failed;
      return report;
    }
    const mlir::OperationFingerPrint now(*module);
    step.program_changed = now != fingerprint;
    fingerprint = now;
    if (!step.program_changed) {
      report.steps.push_back(last = step);
      continue;
    }
    auto results = Run(*module, inputs, rng);
    if (!results.ok()) {
      report.error =
          "after pass '" + step.name + "' (step " + std::to_string(step.number) +
          ") the program does not run on the CPU provider: " + results.status().message();
      return report;
    }
    step.runtime_ops = results->runtime_ops;
    step.max_abs_difference = 0;
    for (size_t o = 0; o < reference->outputs.size(); ++o) {
      const Tensor& want = reference->outputs[o];
      const Tensor& got = results->outputs[o];
      if (got.dtype() != want.dtype() || got.shape() != want.shape()) {
        report.error = "after pass '" + step.name + "' (step " + std::to_string(step.number) +
                       ") output '" + reference->names[o] + "' is " + DTypeName(got.dtype()) +
                       FormatShape(got.shape()) + ", not " + DTypeName(want.dtype()) +
                       FormatShape(want.shape());
        return report;
      }
      const Difference diff = Compare(want, got);
      step.max_abs_difference = std::max(step.max_abs_difference, diff.max_abs);
      if (diff.worst >= 0) {
        report.change = ResultChange{step.number,
                                     step.name,
                                     reference->names[o],
                                     Unravel(diff.worst, want.shape()),
                                     FormatElement(want, diff.worst),
                                     FormatElement(got, diff.worst),
                                     diff.max_abs};
        return report;
      }
    }
    report.steps.push_back(last = step);
  }
  return report;
}

std::vector<PipelineStep> CheckedPipeline(const PipelineOptions& options) {
  std::vector<PipelineStep> steps = CompilerPipeline(options);
  if (options.target == "cuda")
    steps.erase(std::find_if(steps.begin(), steps.end(),
                             [](const PipelineStep& s) { return s.name == "place"; }),
                steps.end());
  return steps;
}

std::string Describe(const ResultChange& change, uint64_t seed) {
  std::string element;
  for (size_t d = 0; d < change.element.size(); ++d)
    element += (d ? ", " : "") + std::to_string(change.element[d]);
  char max_abs[32];
  std::snprintf(max_abs, sizeof(max_abs), "%.6g", change.max_abs_difference);
  return "results change after pass '" + change.name + "' (step " + std::to_string(change.number) +
         "): output '" + change.output + "'" +
         (change.element.empty() ? "" : " element [" + element + "]") + ": " + change.before +
         " before, " + change.after + " after (max abs difference " + max_abs +
         "; inputs from seed " + std::to_string(seed) + ")";
}

}  // namespace brt::bridge

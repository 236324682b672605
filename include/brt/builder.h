// Writes .brtx executables. Used by tests, examples and the compiler bridge.
//
//   brt::ExecutableBuilder b;
//   auto& f = b.AddFunction("main");
//   auto x = f.Input("x", brt::DType::kF32, {"batch", 4});
//   auto y = f.Op("exponential", {x}, {{brt::DType::kF32, {"batch", 4}}})[0];
//   auto z = f.Op(brt::TransposeAttrs{.permutation = {1, 0}}, {y},
//                 {{brt::DType::kF32, {4, "batch"}}})[0];
//   f.Output("z", z);
//   brt::Status s = b.Save("model.brtx");
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "brt/op_attrs.h"
#include "brt/status.h"
#include "brt/types.h"

namespace brt {

using ValueId = uint32_t;

struct TensorType {
  DType dtype = DType::kF32;
  std::vector<Dim> dims;
};

struct Attribute {
  using Value = std::variant<int64_t, double, std::vector<int64_t>, std::vector<double>,
                             std::string, std::vector<uint8_t>>;
  std::string name;
  Value value;
  Attribute(std::string n, int64_t v) : name(std::move(n)), value(v) {}
  Attribute(std::string n, int v) : name(std::move(n)), value(int64_t{v}) {}
  Attribute(std::string n, double v) : name(std::move(n)), value(v) {}
  Attribute(std::string n, std::vector<int64_t> v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, std::vector<double> v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, std::string v) : name(std::move(n)), value(std::move(v)) {}
  Attribute(std::string n, const char* v) : name(std::move(n)), value(std::string(v)) {}
  Attribute(std::string n, std::vector<uint8_t> v) : name(std::move(n)), value(std::move(v)) {}
};

// A registry kind's typed attributes (brt/op_attrs.h) as the generic Op()
// takes them; absent optional ones are left out.
#define BRT_REQUIRED(name, type) out.emplace_back(#name, attrs.name);
#define BRT_OPTIONAL(name, type) \
  if (attrs.name) out.emplace_back(#name, *attrs.name);
#define BRT_DEFAULT(name, type, value) out.emplace_back(#name, attrs.name);
#define BRT_OP(Name, kind_name, min_operands, max_operands, cls, flags, row_attrs)        \
  inline std::vector<Attribute> ToAttributes([[maybe_unused]] const Name##Attrs& attrs) { \
    std::vector<Attribute> out;                                                           \
    row_attrs return out;                                                                 \
  }
#include "brt/ops.def"

class FunctionBuilder {
 public:
  ValueId Input(std::string name, DType dtype, std::vector<Dim> dims, Device device = {});
  // Donated state: an input whose buffer an output may alias.
  ValueId State(std::string name, DType dtype, std::vector<Dim> dims, Device device = {});
  // Bytes are stored in an aligned weight segment; shape must be static.
  ValueId Weight(std::string name, DType dtype, std::vector<int64_t> dims,
                 std::span<const uint8_t> bytes, Device device = {});
  // Appends an op; returns its result values. Device ops on different
  // streams (0-255) may run concurrently: a request context gives each
  // stream its own queue and orders them only where one op depends on
  // another's results or memory.
  std::vector<ValueId> Op(std::string kind, std::vector<ValueId> operands,
                          std::vector<TensorType> results, std::vector<Attribute> attrs = {},
                          Device device = {}, int stream = 0);
  // The same for a kind of the op registry, its attributes typed:
  // f.Op(brt::SliceAttrs{.start_indices = {0}, .limit_indices = {2}}, {x}, ...).
  template <typename Attrs>
  requires requires { Attrs::kKind; }
  std::vector<ValueId> Op(const Attrs& attrs, std::vector<ValueId> operands,
                          std::vector<TensorType> results, Device device = {}, int stream = 0) {
    return Op(Attrs::kKind, std::move(operands), std::move(results), ToAttributes(attrs), device,
              stream);
  }
  // Appends a brt.copy of `value` to device `to`. The provider of the
  // non-host side runs it (a device-to-host copy runs on the device).
  ValueId Copy(ValueId value, Device to, int stream = 0);
  // Declares a result. alias_of names an input/state argument written in place.
  void Output(std::string name, ValueId value, std::string alias_of = {});

  // A per-rank program: the device mesh it runs on (axis name and size; the
  // world size is their product) and, per argument dimension, the mesh axes
  // it is split over ("x", "x,y", or "" for whole), so callers can slice
  // global arrays and assemble results.
  void SetMesh(std::vector<std::pair<std::string, int64_t>> axes);
  // Makes this function a region: a loop's condition or body, or a branch,
  // which a `while` or `case` op of a function added before it names by
  // its index (the order of AddFunction calls, from 0); not callable by
  // name.
  void MarkRegion();
  // A relation the symbols of the function's dimensions must satisfy, checked
  // when the inputs are bound: "b >= 1", "mod(s, 8) == 0" (docs/format.md).
  // A symbolic dimension itself may be an expression: Dim("2*b").
  void AddConstraint(std::string relation);
  Status SetSharding(std::string_view argument, std::vector<std::string> per_dim);

  const TensorType& type(ValueId value) const;

 private:
  friend class ExecutableBuilder;
  struct Data;
  explicit FunctionBuilder(std::string name);
  std::shared_ptr<Data> data_;
};

// What the builder's memory planner did, per function.
struct BuildReport {
  struct Function {
    std::string name;
    int num_ops = 0;
    int64_t arena_bytes = 0;             // planned arena size (all devices)
    int64_t live_bytes_lower_bound = 0;  // most bytes live at once
    // The same with each value rounded up to the arena alignment (256 bytes):
    // no aligned plan can do better.
    int64_t aligned_lower_bound = 0;
    // Results given an operand's bytes: reshapes, and ops writing over an
    // operand no later op reads (the registry's kInPlace).
    int shared_results = 0;
  };
  std::vector<Function> functions;
};

class ExecutableBuilder {
 public:
  explicit ExecutableBuilder(std::string producer = "brt-builder");
  ~ExecutableBuilder();
  FunctionBuilder& AddFunction(std::string name);
  // How many functions were added: the index the next one gets.
  int function_count() const;
  void AddKernel(std::string name, std::string target, std::vector<uint8_t> image,
                 std::string source = {});

  // The memory plan of every function is computed here (liveness, 256-byte
  // aligned offsets in one arena per device).
  Expected<std::vector<uint8_t>> Serialize(BuildReport* report = nullptr) const;
  // Writes the file; large all-zero weight ranges become holes (sparse file).
  Status Save(const std::string& path, BuildReport* report = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace brt

#include "serialize/Serialize.h"

#include <fstream>
#include <set>

#include "BrtDialect.h"
#include "RuntimeTypes.h"
#include "SymbolicDims.h"
#include "brt/op_registry.h"
#include "codegen/CudaCodegen.h"
#include "import/Import.h"
#include "import/OpText.h"
#include "import/PerRank.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "passes/Passes.h"

namespace brt::bridge {
namespace {

bool ToAttribute(const mlir::NamedAttribute& na, std::vector<Attribute>& out) {
  const std::string name = na.getName().str();
  mlir::Attribute a = na.getValue();
  if (auto ints = mlir::dyn_cast<mlir::DenseI64ArrayAttr>(a)) {
    out.emplace_back(name,
                     std::vector<int64_t>(ints.asArrayRef().begin(), ints.asArrayRef().end()));
  } else if (auto floats = mlir::dyn_cast<mlir::DenseF64ArrayAttr>(a)) {
    out.emplace_back(name,
                     std::vector<double>(floats.asArrayRef().begin(), floats.asArrayRef().end()));
  } else if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(a)) {
    out.emplace_back(name, static_cast<int64_t>(i.getValue().getSExtValue()));
  } else if (auto f = mlir::dyn_cast<mlir::FloatAttr>(a)) {
    out.emplace_back(name, f.getValueAsDouble());
  } else if (auto s = mlir::dyn_cast<mlir::StringAttr>(a)) {
    out.emplace_back(name, s.getValue().str());
  } else if (auto d = mlir::dyn_cast<mlir::DenseElementsAttr>(a)) {
    out.emplace_back(name, ElementBytes(d));
  } else {
    return false;
  }
  return true;
}

// A returned value's slot before its copy is emitted.
constexpr ValueId kDeferred = static_cast<ValueId>(-1);

// Whether `value` may be computed straight into `donor`'s buffer: no op
// after its producer reads the donor, and the producer reads it not at all
// or as an operand it may write its result over (the registry's in-place
// flags).
bool WritableInPlace(mlir::Value value, mlir::Value donor) {
  auto producer = value.getDefiningOp<BrtOp>();
  if (!producer) return false;
  auto dead_after = [&](mlir::Value v) {
    return llvm::none_of(v.getUsers(), [&](mlir::Operation* user) {
      return user != producer && producer->isBeforeInBlock(user);
    });
  };
  auto operands = producer.getInputs();
  if (!llvm::is_contained(operands, donor)) return dead_after(donor);
  const OpSchema* schema = FindOpSchema(producer.getKind());
  return schema && InPlaceOperand(
                       schema->flags, operands, [](mlir::Value v) { return v; },
                       [&](mlir::Value v) { return v == donor && v.getType() == value.getType(); },
                       dead_after) >= 0;
}

// Adds `main` (a module's @main, or one of its regions) to `builder` as
// function `name`. Generated kernels keep the names brt-generate-cuda-kernels
// gave them, which are their PTX entries' and unique in the executable.
// Control-flow ops name their regions by position in the module; in the
// executable that is `first_function` further on, where the module's @main
// went.
Status AddFunction(ExecutableBuilder& builder, const std::string& name, mlir::func::FuncOp main,
                   const SerializeOptions& options, SerializeReport* serialized, int first_function,
                   int module_functions) {
  FunctionBuilder& f = builder.AddFunction(name);
  if (main->hasAttr(kRegionAttr)) f.MarkRegion();
  if (auto constraints = main->getAttrOfType<mlir::ArrayAttr>(kConstraintsAttr))
    for (mlir::Attribute c : constraints) f.AddConstraint(mlir::cast<mlir::StringAttr>(c).str());
  // A dynamic dimension must carry its expression (SymbolicDims.h): a pass
  // that made a type without it would otherwise write an unknown size.
  for (mlir::Type t : main.getArgumentTypes())
    if (HasSymbolicDims(t) && !SymbolicShape(t))
      return Status(StatusCode::kInvalidArgument,
                    Where(main.getLoc()) + ": argument type " + PrintedText(t) +
                        " has a dynamic dimension without its symbolic size");
  llvm::DenseMap<mlir::Value, ValueId> ids;
  const Device target{options.target == "cuda" ? DeviceKind::kCuda : DeviceKind::kCpu, 0};
  // Arguments keep the names the importer carried (unique, else "arg<i>").
  std::vector<std::string> arg_names;
  std::set<std::string> taken_names;
  for (unsigned i = 0; i < main.getNumArguments(); ++i) {
    auto given = main.getArgAttrOfType<mlir::StringAttr>(i, kArgNameAttr);
    std::string name = given && !given.getValue().empty() ? given.str() : "arg" + std::to_string(i);
    if (!taken_names.insert(name).second) name = "arg" + std::to_string(i);
    taken_names.insert(name);
    arg_names.push_back(std::move(name));
  }
  // Donated arguments become state, written in place by their result.
  llvm::DenseMap<int, int> donor_of_result;
  for (auto [i, arg] : llvm::enumerate(main.getArguments())) {
    TensorType t = ToTensorType(arg.getType());
    const std::string& name = arg_names[i];
    if (auto k = main.getArgAttrOfType<mlir::IntegerAttr>(i, kAliasOutputAttr)) {
      donor_of_result[static_cast<int>(k.getInt())] = static_cast<int>(i);
      ids[arg] = f.State(name, t.dtype, t.dims, target);
    } else {
      ids[arg] = f.Input(name, t.dtype, t.dims, target);
    }
  }
  // A per-rank (shard_map) program: its mesh and shardings, set by the importer.
  if (auto mesh = main->getAttrOfType<mlir::StringAttr>(kMeshAttr)) {
    std::vector<std::pair<std::string, int64_t>> axes;
    for (llvm::StringRef rest = mesh.getValue(); !rest.empty();) {
      auto [axis, tail] = rest.split(',');
      auto [name, size] = axis.split('=');
      axes.emplace_back(name.str(), std::stoll(size.str()));
      rest = tail;
    }
    f.SetMesh(std::move(axes));
  }
  auto sharding_of = [](mlir::ArrayAttr a) {
    std::vector<std::string> dims;
    for (mlir::Attribute d : a) dims.push_back(mlir::cast<mlir::StringAttr>(d).str());
    return dims;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> shardings;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (auto a = main.getArgAttrOfType<mlir::ArrayAttr>(i, kShardingAttr))
      shardings.emplace_back(arg_names[i], sharding_of(a));
  for (unsigned i = 0; i < main.getNumResults(); ++i)
    if (auto a = main.getResultAttrOfType<mlir::ArrayAttr>(i, kShardingAttr))
      shardings.emplace_back("result" + std::to_string(i), sharding_of(a));
  auto device_of = [&](mlir::Operation* op) {
    auto d = op->getAttrOfType<mlir::StringAttr>(kDeviceAttr);
    return d && d.getValue() == "cuda" ? Device{DeviceKind::kCuda, 0} : Device{DeviceKind::kCpu, 0};
  };
  // Kernels brt-generate-cuda-kernels attached: embedded by name.
  auto embed = [&](BrtOp k, mlir::DictionaryAttr g, std::vector<Attribute>& attrs) {
    const std::string name = g.getAs<mlir::StringAttr>("name").str();
    const llvm::StringRef source = g.getAs<mlir::StringAttr>("source").getValue();
    const llvm::StringRef image = g.getAs<mlir::StringAttr>("image").getValue();
    if (!options.kernel_dump_dir.empty()) {
      std::ofstream(options.kernel_dump_dir + "/" + name + ".cu") << source.str();
      std::ofstream(options.kernel_dump_dir + "/" + name + ".ptx") << image.str();
    }
    builder.AddKernel(name, g.getAs<mlir::StringAttr>("target").str(),
                      std::vector<uint8_t>(image.begin(), image.end()), source.str());
    attrs.emplace_back("kernel", name);
    attrs.emplace_back("block_size", g.getAs<mlir::IntegerAttr>("block_size").getInt());
    if (serialized) ++serialized->kernels, serialized->ptx_bytes += image.size();
  };
  int weights = 0;
  for (mlir::Operation& op : main.getBody().front()) {
    if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
      const auto operands = ret.getOperands();
      std::vector<ValueId> out(operands.size());
      std::vector<bool> in_place(operands.size(), false);
      llvm::DenseMap<mlir::Value, int> returned;
      auto copy = [&](mlir::Value v) {
        return f.Op("reshape", {ids.lookup(v)}, {ToTensorType(v.getType())}, {}, target)[0];
      };
      // An output must be produced by an op of its own: returning an input,
      // or one value twice, takes a copy.
      for (auto [i, v] : llvm::enumerate(operands)) {
        out[i] = ids.lookup(v);
        const bool taken = mlir::isa<mlir::BlockArgument>(v) || returned.count(v);
        returned[v] = static_cast<int>(i);
        auto donor = donor_of_result.find(static_cast<int>(i));
        if (donor != donor_of_result.end() && !mlir::isa<mlir::BlockArgument>(v)) {
          in_place[i] = true;
          // Its buffer is the donor's: a copy at the end unless no op reads
          // the donor after the producer writes it.
          if (taken || !WritableInPlace(v, main.getArgument(donor->second))) out[i] = kDeferred;
        } else if (taken) {
          out[i] = copy(v);
        }
      }
      // Copies into donors' buffers run last, after every read of the old values.
      for (auto [i, v] : llvm::enumerate(operands)) {
        if (serialized && in_place[i])
          ++(out[i] == kDeferred ? serialized->state_copied : serialized->state_in_place);
        if (out[i] == kDeferred) out[i] = copy(v);
      }
      for (size_t i = 0; i < operands.size(); ++i)
        f.Output("result" + std::to_string(i), out[i],
                 in_place[i] ? arg_names[donor_of_result[static_cast<int>(i)]] : std::string());
      break;
    }
    auto k = mlir::dyn_cast<BrtOp>(op);
    if (!k)
      return Status(StatusCode::kInvalidArgument, Where(op.getLoc()) + ": unexpected op '" +
                                                      op.getName().getStringRef().str() + "'");
    std::vector<TensorType> results;
    for (mlir::Type t : k->getResultTypes()) {
      if (HasSymbolicDims(t) && !SymbolicShape(t))
        return Status(StatusCode::kInvalidArgument,
                      Where(op.getLoc()) + ": '" + k.getKind().str() + "' result type " +
                          PrintedText(t) +
                          " has a dynamic dimension without its symbolic size (a pass that "
                          "needs static shapes rewrote it)");
      results.push_back(ToTensorType(t));
    }
    if (auto constant = mlir::dyn_cast<ConstantOp>(op)) {
      auto value = ConstantBytes(constant.getValue(), Where(op.getLoc()));
      if (!value.ok()) return value.status();
      std::vector<uint8_t> bytes = std::move(value).value();
      // A large constant is a weight, stored once; one the function returns
      // stays an op, since an output must be some op's result.
      const bool returned = llvm::any_of(k->getResult(0).getUsers(), [](mlir::Operation* user) {
        return mlir::isa<mlir::func::ReturnOp>(user);
      });
      if (bytes.size() > kInlineConstantBytes && !returned) {
        std::vector<int64_t> shape;
        for (const Dim& d : results[0].dims) shape.push_back(d.size);
        // A weight on a device is uploaded once, when the Session loads.
        ids[k->getResult(0)] = f.Weight("weight" + std::to_string(weights++), results[0].dtype,
                                        shape, bytes, device_of(k));
        continue;
      }
      ids[k->getResult(0)] =
          f.Op("constant", {}, results, {{"value", std::move(bytes)}}, device_of(k))[0];
      continue;
    }
    std::vector<ValueId> operands;
    for (mlir::Value v : k.getInputs()) operands.push_back(ids.lookup(v));
    std::vector<Attribute> attrs;
    for (const mlir::NamedAttribute& na : k.getParams())
      if (!ToAttribute(na, attrs))
        return Status(StatusCode::kInvalidArgument,
                      Where(op.getLoc()) + ": attribute '" + na.getName().str() + "' of '" +
                          k.getKind().str() + "' cannot be serialized");
    if (auto g = k->getAttrOfType<mlir::DictionaryAttr>(kGeneratedKernelAttr)) embed(k, g, attrs);
    if (k.getKind() == "while" || k.getKind() == "case")
      for (Attribute& a : attrs) {
        auto shift = [&](int64_t& index) {
          if (index <= 0 || index >= module_functions) return false;
          index += first_function;
          return true;
        };
        bool fits = true;
        if (auto* i = std::get_if<int64_t>(&a.value)) fits = shift(*i);
        if (auto* list = std::get_if<std::vector<int64_t>>(&a.value))
          for (int64_t& i : *list) fits = fits && shift(i);
        if (!fits)
          return Status(StatusCode::kInvalidArgument,
                        Where(op.getLoc()) + ": '" + k.getKind().str() + "''s attribute '" +
                            a.name + "' names no region of the module (it has " +
                            std::to_string(module_functions - 1) + ")");
      }
    std::vector<ValueId> out =
        mlir::isa<CopyOp>(op)
            ? std::vector<ValueId>{f.Copy(operands.at(0), device_of(k))}
            : f.Op(k.getKind().str(), operands, results, std::move(attrs), device_of(k));
    for (auto [r, id] : llvm::zip(k->getResults(), out)) ids[r] = id;
  }
  for (auto& [argument, dims] : shardings) BRT_RETURN_IF_ERROR(f.SetSharding(argument, dims));
  return Status::Ok();
}

// Adds every (name, module) to `builder`: its @main as `name`, then its
// regions as "<name>.<region>" (e.g. "main.while0.body").
Status AddFunctions(ExecutableBuilder& builder,
                    const std::vector<std::pair<std::string, mlir::ModuleOp>>& functions,
                    const SerializeOptions& options, SerializeReport* serialized) {
  for (const auto& [name, entry] : functions) {
    mlir::ModuleOp module = entry;
    auto main = module.lookupSymbol<mlir::func::FuncOp>("main");
    if (!main) return Status(StatusCode::kInvalidArgument, "module has no function 'main'");
    std::vector<mlir::func::FuncOp> fns = {main};
    for (auto fn : module.getOps<mlir::func::FuncOp>())
      if (fn != main) fns.push_back(fn);
    if (*module.getOps<mlir::func::FuncOp>().begin() != main)
      return Status(StatusCode::kInvalidArgument,
                    "module '" + name + "': @main must come first (regions are named by position)");
    const int first = builder.function_count();
    for (auto [i, fn] : llvm::enumerate(fns)) {
      const std::string fn_name = i == 0 ? name : name + "." + fn.getSymName().str();
      BRT_RETURN_IF_ERROR(AddFunction(builder, fn_name, fn, options, serialized, first,
                                      static_cast<int>(fns.size())));
    }
  }
  return Status::Ok();
}

}  // namespace

Status SerializeModules(const std::vector<std::pair<std::string, mlir::ModuleOp>>& functions,
                        const std::string& producer, const std::string& path,
                        const SerializeOptions& options, BuildReport* report,
                        SerializeReport* serialized) {
  ExecutableBuilder builder(producer);
  BRT_RETURN_IF_ERROR(AddFunctions(builder, functions, options, serialized));
  return builder.Save(path, report);
}

Expected<std::vector<uint8_t>> SerializeModulesToMemory(
    const std::vector<std::pair<std::string, mlir::ModuleOp>>& functions,
    const std::string& producer, const SerializeOptions& options) {
  ExecutableBuilder builder(producer);
  BRT_RETURN_IF_ERROR(AddFunctions(builder, functions, options, nullptr));
  return builder.Serialize();
}

}  // namespace brt::bridge

#include "import/PerRank.h"

#include <regex>

#include "import/OpText.h"

namespace brt::bridge {
namespace {

std::vector<std::string> QuotedNames(const std::string& text) {
  std::vector<std::string> out;
  static const std::regex quoted("\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), quoted);
       it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// `#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, ...]>` (or one
// `#sdy.sharding<@mesh, [...]>`): per value, per dimension, its axes.
bool ParseShardyShardings(const std::string& text, std::vector<std::vector<std::string>>& out,
                          std::string* error) {
  for (size_t at = text.find("<@"); at != std::string::npos; at = text.find("<@", at + 2)) {
    size_t open = text.find('[', at);
    if (open == std::string::npos) break;
    std::vector<std::string> dims;
    size_t i = open + 1;
    while (i < text.size() && text[i] != ']') {
      if (text[i] != '{') {
        ++i;
        continue;
      }
      const size_t close = text.find('}', i);
      if (close == std::string::npos) break;
      const std::string group = text.substr(i + 1, close - i - 1);
      if (group.find(':') != std::string::npos || group.find('?') != std::string::npos) {
        *error = "sharding " + text + " uses sub-axes or open dimensions, which brt cannot run";
        return false;
      }
      std::string axes;
      for (const std::string& name : QuotedNames(group)) axes += (axes.empty() ? "" : ",") + name;
      dims.push_back(axes);
      i = close + 1;
    }
    out.push_back(dims);
  }
  return true;
}

bool FindShardy(mlir::ModuleOp module, mlir::func::FuncOp main, mlir::Operation* manual,
                PerRankProgram& out, std::string* error) {
  for (mlir::Operation& op : main.getBody().front()) {
    const llvm::StringRef name = op.getName().getStringRef();
    if (&op != manual && name != "func.return") {
      *error = "a shard_map program must hold nothing but the shard_map: 'main' also has '" +
               name.str() + "' outside sdy.manual_computation";
      return false;
    }
    if (name == "func.return")
      for (auto [i, v] : llvm::enumerate(op.getOperands()))
        if (v != manual->getResult(i)) {
          *error = "'main' must return the shard_map's results in order";
          return false;
        }
  }
  for (auto [i, v] : llvm::enumerate(manual->getOperands()))
    if (v != main.getArgument(i)) {
      *error = "the shard_map must take 'main's arguments in order";
      return false;
    }
  module.walk([&](mlir::Operation* op) {
    if (op->getName().getStringRef() != "sdy.mesh" || !out.mesh.empty()) return;
    const std::string mesh = PrintedText(AttrOrProperty(op, "mesh"));
    static const std::regex axis("\"([^\"]+)\"\\s*=\\s*(\\d+)");
    for (auto it = std::sregex_iterator(mesh.begin(), mesh.end(), axis);
         it != std::sregex_iterator(); ++it)
      out.mesh.emplace_back((*it)[1], std::stoll((*it)[2]));
    if (mesh.find("device_ids") != std::string::npos) out.mesh.clear(), *error = mesh;
  });
  if (!error->empty()) {
    *error = "mesh " + *error + " orders its devices explicitly, which brt cannot run";
    return false;
  }
  if (out.mesh.empty()) {
    *error = "shard_map program without an sdy.mesh";
    return false;
  }
  const std::vector<std::string> manual_axes =
      QuotedNames(PrintedText(AttrOrProperty(manual, "manual_axes")));
  for (const auto& [axis, size] : out.mesh)
    if (size > 1 && std::find(manual_axes.begin(), manual_axes.end(), axis) == manual_axes.end()) {
      *error = "shard_map over some of the mesh's axes (axis '" + axis +
               "' is not manual) is not supported: map over every axis";
      return false;
    }
  if (!ParseShardyShardings(PrintedText(AttrOrProperty(manual, "in_shardings")), out.arg_sharding,
                            error) ||
      !ParseShardyShardings(PrintedText(AttrOrProperty(manual, "out_shardings")),
                            out.result_sharding, error))
    return false;
  out.body = &manual->getRegion(0).front();
  return true;
}

// `{devices=[4,1]<=[4]}`, `{replicated}`: brt runs GSPMD shardings that split
// at most... each dimension over all the devices or none (a 1-D mesh).
bool ParseGspmdSharding(const std::string& text, int64_t devices, size_t rank,
                        std::vector<std::string>& dims, std::string* error) {
  dims.assign(rank, "");
  if (text.empty() || text == "{replicated}") return true;
  static const std::regex tiled(
      R"(^\{devices=\[([0-9,]+)\]<=\[(\d+)\]( last_tile_dim_replicate)?\}$)");
  std::smatch m;
  if (!std::regex_match(text, m, tiled)) {
    *error = "GSPMD sharding " + text + " is not supported: export with Shardy (JAX's default)";
    return false;
  }
  std::vector<int64_t> factors;
  std::string list = m[1];
  for (size_t start = 0; start < list.size();) {
    size_t comma = std::min(list.find(',', start), list.size());
    factors.push_back(std::stoll(list.substr(start, comma - start)));
    start = comma + 1;
  }
  if (m[3].matched) factors.pop_back();
  if (factors.size() != rank) {
    *error = "GSPMD sharding " + text + " does not match a rank-" + std::to_string(rank) + " value";
    return false;
  }
  for (size_t d = 0; d < rank; ++d) {
    if (factors[d] == devices) {
      dims[d] = "devices";
    } else if (factors[d] != 1) {
      *error = "GSPMD sharding " + text +
               " splits a dimension over some of the devices: export with Shardy (JAX's default)";
      return false;
    }
  }
  return true;
}

bool FindGspmd(mlir::ModuleOp module, mlir::func::FuncOp main, mlir::func::CallOp call,
               PerRankProgram& out, std::string* error) {
  int64_t devices = 1;
  if (auto n = module->getAttrOfType<mlir::IntegerAttr>("mhlo.num_partitions"))
    devices = n.getInt();
  out.mesh = {{"devices", devices}};
  auto callee = module.lookupSymbol<mlir::func::FuncOp>(call.getCallee());
  if (!callee || callee.getBody().getBlocks().size() != 1) {
    *error = "the shard_map body called from 'main' is missing or has control flow";
    return false;
  }
  auto target = [](mlir::Operation* op) {
    auto t = op ? AttrOrPropertyOf<mlir::StringAttr>(op, "call_target_name") : mlir::StringAttr();
    return t ? t.getValue() : llvm::StringRef();
  };
  // Each operand of the call is SPMDFullToShardShape(Sharding(argument i)).
  for (auto [i, v] : llvm::enumerate(call.getOperands())) {
    mlir::Operation* to_shard = v.getDefiningOp();
    mlir::Operation* sharding = to_shard && to_shard->getNumOperands() == 1
                                    ? to_shard->getOperand(0).getDefiningOp()
                                    : nullptr;
    if (target(to_shard) != "SPMDFullToShardShape" || target(sharding) != "Sharding" ||
        sharding->getOperand(0) != main.getArgument(i)) {
      *error = "operand " + std::to_string(i) + " of the shard_map call is not argument " +
               std::to_string(i) + " of 'main' through @Sharding and @SPMDFullToShardShape";
      return false;
    }
    auto text = main.getArgAttrOfType<mlir::StringAttr>(i, "mhlo.sharding");
    auto type = mlir::cast<mlir::RankedTensorType>(main.getArgument(i).getType());
    out.arg_sharding.emplace_back();
    if (!ParseGspmdSharding(text ? text.str() : "", devices, type.getRank(),
                            out.arg_sharding.back(), error))
      return false;
  }
  // Each result is SPMDShardToFullShape(...), which carries its sharding.
  mlir::Operation* ret = main.getBody().front().getTerminator();
  for (unsigned i = 0; i < main.getNumResults(); ++i) {
    mlir::Operation* to_full = ret->getOperand(i).getDefiningOp();
    mlir::StringAttr text = main.getResultAttrOfType<mlir::StringAttr>(i, "mhlo.sharding");
    if (to_full && target(to_full) == "SPMDShardToFullShape")
      text = AttrOrPropertyOf<mlir::StringAttr>(to_full, "mhlo.sharding");
    auto type = mlir::cast<mlir::RankedTensorType>(main.getResultTypes()[i]);
    out.result_sharding.emplace_back();
    if (!ParseGspmdSharding(text ? text.str() : "", devices, type.getRank(),
                            out.result_sharding.back(), error))
      return false;
  }
  out.body = &callee.getBody().front();
  return true;
}

}  // namespace

bool FindPerRankProgram(mlir::ModuleOp module, mlir::func::FuncOp main, PerRankProgram& out,
                        std::string* error) {
  mlir::Operation* manual = nullptr;
  mlir::func::CallOp call;
  bool gspmd = false;
  for (mlir::Operation& op : main.getBody().front()) {
    const llvm::StringRef name = op.getName().getStringRef();
    if (name == "sdy.manual_computation") {
      if (manual) {
        *error = "'main' holds several shard_maps; brt runs one per program";
        return false;
      }
      manual = &op;
    }
    if (auto c = mlir::dyn_cast<mlir::func::CallOp>(op)) call = c;
    if (name == "stablehlo.custom_call") {
      auto target = AttrOrPropertyOf<mlir::StringAttr>(&op, "call_target_name");
      gspmd |= target && target.getValue() == "SPMDFullToShardShape";
    }
  }
  if (manual) return FindShardy(module, main, manual, out, error);
  if (gspmd && call) return FindGspmd(module, main, call, out, error);
  if (gspmd) *error = "@SPMDFullToShardShape without a shard_map body call";
  return !gspmd;
}

}  // namespace brt::bridge

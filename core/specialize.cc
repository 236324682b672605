// Specialization: for one assignment of a function's symbolic dims, every
// value's shape and size, each op prepared once (prepare() of its kernel) and
// the arenas planned; cached per FunctionState and shared by contexts. And a
// context's side: reading the symbols from its bindings, picking the
// specialization and binding its buffers (PrepareRun).
#include "session_impl.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "memory_planner.h"

namespace brt {

Expected<std::shared_ptr<const Specialization>> Session::Impl::Specialize(
    FunctionState& fs, const std::vector<int64_t>& symbols) {
  std::lock_guard<std::mutex> lock(fs.mu);
  if (auto it = fs.specializations.find(symbols); it != fs.specializations.end()) {
    ++fs.plan_hits;
    it->second.last_use = ++fs.uses;
    return it->second.spec;
  }
  const auto started = std::chrono::steady_clock::now();
  auto spec = std::make_shared<Specialization>();
  std::string where = "function '" + fs.info.name + "'";
  for (size_t v = 0; v < fs.values.size(); ++v) {
    std::vector<int64_t> shape;
    for (const Dim& d : fs.values[v].dims) {
      if (d.is_static()) {
        shape.push_back(d.size);
        continue;
      }
      auto size = fs.dim_exprs.find(d.symbol)->second.Evaluate(symbols);
      if (!size.ok())
        return Status(size.status().code(),
                      where + ": value #" + std::to_string(v) + ": " + size.status().message());
      if (*size < 0)
        return Status(StatusCode::kInvalidArgument,
                      where + ": value #" + std::to_string(v) + " dimension '" + d.symbol +
                          "' is " + std::to_string(*size) + " for these inputs");
      shape.push_back(*size);
    }
    auto n = NumElements(shape);
    size_t bytes = 0;
    if (!n ||
        __builtin_mul_overflow(static_cast<size_t>(*n), DTypeSize(fs.values[v].dtype), &bytes))
      return Status(StatusCode::kInvalidArgument, where + ": value #" + std::to_string(v) +
                                                      " shape " + FormatShape(shape) +
                                                      " is too large");
    spec->shapes.push_back(std::move(shape));
    spec->bytes.push_back(bytes);
  }

  auto describe = [&](uint32_t v) {
    return BrtTensorDesc{static_cast<int32_t>(fs.values[v].dtype),
                         static_cast<int32_t>(spec->shapes[v].size()), spec->shapes[v].data()};
  };
  for (size_t i = 0; i < fs.ops.size(); ++i) {
    const ResolvedOp& r = fs.ops[i];
    std::vector<BrtTensorDesc> in, out;
    std::vector<const void*> constants;
    for (uint32_t v : r.operands)
      in.push_back(describe(v)), constants.push_back(fs.constant_data[v]);
    for (uint32_t v : r.results) out.push_back(describe(v));
    BrtOpDesc desc{};
    desc.struct_size = sizeof(BrtOpDesc);
    desc.kind = r.kind.c_str();
    desc.device = r.provider->api->device_kind;
    desc.num_operands = static_cast<int32_t>(in.size());
    desc.operands = in.data();
    desc.num_results = static_cast<int32_t>(out.size());
    desc.results = out.data();
    desc.num_attrs = static_cast<int32_t>(r.attrs.size());
    desc.attrs = r.attrs.data();
    desc.operand_constants = constants.data();
    desc.comm = r.comm;
    desc.comm_rank = r.comm_rank;
    desc.comm_size = r.comm_size;
    desc.world_rank = rank;
    desc.world_size = world_size;
    if (r.generated) {
      desc.kernel_name = r.generated->name()->c_str();
      desc.kernel_target = r.generated->target() ? r.generated->target()->c_str() : "";
      if (r.generated->image()) {
        desc.kernel_image = r.generated->image()->data();
        desc.kernel_image_size = r.generated->image()->size();
      }
    }
    PreparedOp p;
    p.kernel = r.kernel;
    p.buffers_begin = static_cast<uint32_t>(spec->buffer_values.size());
    BrtErrorBuffer err{};
    int32_t rc = r.kernel.prepare(r.kernel.kernel_data, &desc, &p.state, &err);
    if (rc != BRT_OK)
      return core::ProviderError(rc, where + " op #" + std::to_string(i) + " '" + r.kind + "' (" +
                                         r.provider->name() + "): " + err.message);
    spec->ops.push_back(p);
    spec->buffer_values.insert(spec->buffer_values.end(), r.operands.begin(), r.operands.end());
    spec->buffer_values.insert(spec->buffer_values.end(), r.results.begin(), r.results.end());
  }

  spec->value_arena.assign(fs.values.size(), -1);
  spec->value_offset.assign(fs.values.size(), 0);
  if (fs.use_file_plan) {
    const fb::MemoryPlan* plan = fs.fn->plan();
    for (size_t a = 0; a < Len(plan->arenas()); ++a) {
      const fb::Arena* arena = plan->arenas()->Get(a);
      spec->arenas.emplace_back(
          Device{core::ToDeviceKind(arena->device()), arena->device_ordinal()},
          static_cast<int64_t>(arena->size()));
    }
    for (size_t v = 0; v < fs.values.size(); ++v) {
      spec->value_arena[v] = plan->value_arena()->Get(v);
      spec->value_offset[v] = static_cast<int64_t>(plan->value_offset()->Get(v));
    }
  } else {
    std::vector<bool> is_argument(fs.values.size(), false);
    for (size_t a = 0; a < Len(fs.fn->arguments()); ++a)
      is_argument[fs.fn->arguments()->Get(a)->value()] = true;
    std::vector<core::PlannedValue> planned(fs.values.size());
    std::vector<Device> devices;
    for (size_t i = 0; i < fs.ops.size(); ++i) {
      for (uint32_t v : fs.ops[i].results) {
        if (is_argument[v]) continue;
        Device d = fs.values[v].device;
        auto it = std::find(devices.begin(), devices.end(), d);
        if (it == devices.end()) it = devices.insert(devices.end(), d);
        planned[v] = {.bytes = static_cast<int64_t>(spec->bytes[v]),
                      .arena = static_cast<int>(it - devices.begin()),
                      .first_use = static_cast<int>(i),
                      .last_use = static_cast<int>(i),
                      .dtype = static_cast<int32_t>(fs.values[v].dtype)};
      }
      for (uint32_t v : fs.ops[i].operands)
        if (planned[v].arena >= 0) planned[v].last_use = static_cast<int>(i);
    }
    core::KeepQueuedOperandsLive(fs.ops, planned);
    core::ShareOperandBytes(fs.ops, planned);
    core::MemoryPlanResult r =
        core::PlanMemory(planned, static_cast<int>(devices.size()), core::kArenaAlignment);
    for (size_t d = 0; d < devices.size(); ++d)
      spec->arenas.emplace_back(devices[d], r.arena_sizes[d]);
    for (size_t v = 0; v < fs.values.size(); ++v) {
      spec->value_arena[v] = planned[v].arena;
      spec->value_offset[v] = std::max<int64_t>(r.offsets[v], 0);
    }
  }
  if (static_cast<int>(fs.specializations.size()) >= max_shape_plans) {
    auto oldest = std::min_element(
        fs.specializations.begin(), fs.specializations.end(),
        [](const auto& a, const auto& b) { return a.second.last_use < b.second.last_use; });
    fs.specializations.erase(oldest);  // a context running it holds its own reference
    ++fs.plan_stats.evictions;
  }
  fs.specializations[symbols] = {spec, ++fs.uses};
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now() - started)
                         .count();
  ++fs.plan_stats.misses;
  fs.plan_stats.total_plan_ns += ns;
  fs.plan_stats.last_plan_ns = ns;
  return std::shared_ptr<const Specialization>(spec);
}

Status RequestContext::Impl::ResolveSymbols(bool require_all, int only) {
  std::vector<int64_t>& values = symbol_values;
  std::vector<size_t>& source = symbol_source;
  values.assign(fs->symbols.size(), -1);
  source.assign(fs->symbols.size(), 0);
  const auto& args = fs->info.arguments;
  // Symbols alone fix their values; dimensions that are expressions are
  // checked once every symbol is known.
  bool has_expressions = false;
  for (size_t a = 0; a < args.size(); ++a) {
    if (!bindings[a].defined() || (only >= 0 && a != static_cast<size_t>(only))) continue;
    for (size_t d = 0; d < args[a].shape.size(); ++d) {
      const Dim& dim = args[a].shape[d];
      if (dim.is_static()) continue;
      const int s = fs->dim_exprs.find(dim.symbol)->second.AsSymbol();
      if (s < 0) {
        has_expressions = true;
        continue;
      }
      int64_t given = bindings[a].shape()[d];
      if (values[s] < 0) {
        values[s] = given, source[s] = a;
      } else if (values[s] != given) {
        return Status(StatusCode::kInvalidArgument,
                      "argument " + ArgName(a) + ": dimension " + std::to_string(d) + " is " +
                          std::to_string(given) + ", but symbol '" + dim.symbol + "' is " +
                          std::to_string(values[s]) + " from argument " + ArgName(source[s]));
      }
    }
  }
  if (!require_all) return Status::Ok();
  for (size_t s = 0; s < values.size(); ++s)
    if (values[s] < 0)
      return Status(StatusCode::kFailedPrecondition,
                    "symbolic dimension '" + fs->symbols[s] +
                        "' is not determined: bind the inputs that use it");
  if (has_expressions) BRT_RETURN_IF_ERROR(CheckExpressionDims());
  for (const core::DimConstraint& c : fs->constraints)
    BRT_RETURN_IF_ERROR(c.Check(values, fs->symbols));
  return Status::Ok();
}

Status RequestContext::Impl::CheckExpressionDims() const {
  const auto& args = fs->info.arguments;
  for (size_t a = 0; a < args.size(); ++a) {
    if (!bindings[a].defined()) continue;
    for (size_t d = 0; d < args[a].shape.size(); ++d) {
      const Dim& dim = args[a].shape[d];
      if (dim.is_static()) continue;
      const core::DimExpr& e = fs->dim_exprs.find(dim.symbol)->second;
      if (e.AsSymbol() >= 0) continue;
      auto want = e.Evaluate(symbol_values);
      if (!want.ok())
        return Status(want.status().code(),
                      "argument " + ArgName(a) + ": " + want.status().message());
      if (*want != bindings[a].shape()[d])
        return Status(StatusCode::kInvalidArgument,
                      "argument " + ArgName(a) + ": dimension " + std::to_string(d) + " is " +
                          std::to_string(bindings[a].shape()[d]) + ", but '" + dim.symbol +
                          "' is " + std::to_string(*want) + " for these inputs");
    }
  }
  return Status::Ok();
}

Status RequestContext::Impl::AllocateShape() {
  for (const auto& [device, size] : spec->arenas) {
    auto block = core::AllocateShared(s->AllocatorFor(device), static_cast<size_t>(size),
                                      core::kArenaAlignment);
    if (!block)
      return Status(StatusCode::kResourceExhausted, "cannot allocate a " + std::to_string(size) +
                                                        "-byte arena on " +
                                                        DeviceKindName(device.kind));
    arenas.push_back(std::move(block));
  }
  for (size_t i = 0; i < spec->ops.size(); ++i) {
    const PreparedOp& op = spec->ops[i];
    // A kernel may create per-request scratch; a null instance runs the state.
    void* instance = nullptr;
    const int32_t rc =
        op.kernel.create_instance ? op.kernel.create_instance(op.state, &instance, &error) : BRT_OK;
    if (rc != BRT_OK) {
      instances.push_back(op.state);
      return core::ProviderError(rc, "function '" + fs->info.name + "' op #" + std::to_string(i) +
                                         " '" + fs->ops[i].kind + "': " + error.message);
    }
    instances.push_back(instance ? instance : op.state);
  }
  return Status::Ok();
}

Status RequestContext::Impl::PrepareRun() {
  const auto& args = fs->info.arguments;
  before.clear();
  after.clear();
  for (int a : fs->info.input_indices)
    if (!bindings[a].defined())
      return Status(StatusCode::kFailedPrecondition, "input " + ArgName(a) + " is not bound");
  BRT_RETURN_IF_ERROR(ResolveSymbols(true));
  if (spec && symbol_values == spec_key && !fs->symbols.empty())
    fs->plan_hits.fetch_add(1, std::memory_order_relaxed);  // the context's own plan
  // A shape this context left before comes back with its plan, arenas,
  // instances and graph.
  std::optional<ShapeGraph> kept;
  if (!spec || symbol_values != spec_key) {
    kept = TakeShapeGraph(symbol_values);
    std::shared_ptr<const Specialization> next;
    if (kept) {
      next = kept->spec;
      fs->plan_hits.fetch_add(1, std::memory_order_relaxed);
    } else {
      auto planned = s->Specialize(*fs, symbol_values);
      if (!planned.ok()) return planned.status();
      next = *planned;
    }
    SetShapeAside();
    spec = std::move(next);
    spec_key = symbol_values;
    if (kept)
      arenas = std::move(kept->arenas), instances = std::move(kept->instances);
    else
      BRT_RETURN_IF_ERROR(AllocateShape());
    value_ptrs.assign(fs->values.size(), nullptr);
    for (size_t v = 0; v < fs->values.size(); ++v)
      if (spec->value_arena[v] >= 0)
        value_ptrs[v] =
            static_cast<char*>(arenas[spec->value_arena[v]].get()) + spec->value_offset[v];
    for (size_t a = 0; a < args.size(); ++a)
      if (fs->weight_data[a])
        value_ptrs[fs->fn->arguments()->Get(a)->value()] = const_cast<void*>(fs->weight_data[a]);
    buffers.assign(spec->buffer_values.size(), nullptr);
    dispatch.clear();
  }

  for (size_t a = 0; a < args.size(); ++a) {
    uint32_t value = fs->fn->arguments()->Get(a)->value();
    if (args[a].role == ArgRole::kInput || args[a].role == ArgRole::kState) {
      const Tensor& b = bindings[a];
      if (b.device() == args[a].device) {
        value_ptrs[value] = b.data();
        continue;
      }
      auto staged = Staging(a, b.num_bytes());
      if (!staged.ok()) return staged.status();
      BRT_RETURN_IF_ERROR(
          AddTransfer(before, args[a].device, *staged, b.device(), b.data(), b.num_bytes()));
      if (b.device().kind == DeviceKind::kCpu)
        before.back().pinned = Pinned(a), before.back().binding = b.data();
      value_ptrs[value] = *staged;
      continue;
    }
    if (args[a].role != ArgRole::kOutput) continue;
    const std::vector<int64_t>& shape = spec->shapes[value];
    // Tensors are only reassigned when they change: copying one allocates.
    auto adopt = [&](const Tensor& t) {
      if (outputs[a].data() != t.data() || outputs[a].shape() != t.shape() ||
          outputs[a].owner() != t.owner())
        outputs[a] = t;
    };
    if (args[a].alias_argument >= 0) {
      adopt(bindings[args[a].alias_argument]);
    } else if (bindings[a].defined()) {
      if (bindings[a].shape() != shape)
        return Status(StatusCode::kInvalidArgument, "output " + ArgName(a) + ": bound with shape " +
                                                        FormatShape(bindings[a].shape()) +
                                                        " but this run produces " +
                                                        FormatShape(shape));
      adopt(bindings[a]);
      if (bindings[a].device() != args[a].device) {
        auto staged = Staging(a, spec->bytes[value]);
        if (!staged.ok()) return staged.status();
        BRT_RETURN_IF_ERROR(AddTransfer(after, bindings[a].device(), bindings[a].data(),
                                        args[a].device, *staged, spec->bytes[value]));
        if (bindings[a].device().kind == DeviceKind::kCpu)
          after.back().pinned = Pinned(a), after.back().binding = bindings[a].data();
        value_ptrs[value] = *staged;
        continue;
      }
    } else if (outputs[a].defined() && outputs[a].shape() == shape && outputs[a].owner() &&
               outputs[a].owner().use_count() == 1 && outputs[a].data() != nullptr &&
               std::none_of(bindings.begin(), bindings.end(),
                            [&](const Tensor& b) { return b.data() == outputs[a].data(); })) {
      // Nobody else holds last run's runtime-allocated buffer: reuse it.
    } else {
      auto block = core::AllocateShared(s->AllocatorFor(args[a].device), spec->bytes[value], 64);
      if (!block)
        return Status(StatusCode::kResourceExhausted,
                      "cannot allocate output " + ArgName(a) + " (" +
                          std::to_string(spec->bytes[value]) + " bytes)");
      void* p = block.get();
      outputs[a] = Tensor::Adopt(
          p, args[a].dtype, shape, [block](void*) mutable { block.reset(); }, args[a].device);
    }
    value_ptrs[value] = outputs[a].data();
  }
  for (size_t i = 0; i < buffers.size(); ++i) buffers[i] = value_ptrs[spec->buffer_values[i]];
  if (dispatch.size() != spec->ops.size()) BRT_RETURN_IF_ERROR(BuildDispatch());
  if (kept) {  // it ran here before: straight to its graph (recorded now if it has none)
    graph = kept->graph;
    graph_buffers = std::move(kept->graph_buffers);
    ran_eagerly = true;
  }
  return Status::Ok();
}

}  // namespace brt

// Control flow: `while` and `case`, which the core runs itself rather than a
// provider. Their regions (a loop's condition and body, a case's branches)
// are functions of the executable marked `region`. Each op's instance runs
// them in request contexts of its own, bound to the op's buffers, so a
// region's ops are resolved, specialized and planned like any function's,
// and on a device a body is recorded as a graph once and replayed on each
// iteration. A loop's condition and a case's index are read on the host
// after each run of the region before: trip counts and branches depend on
// the data, and a branch not taken does not run.
#include <cstdio>
#include <cstring>

#include "session_impl.h"

namespace brt {
namespace {

struct ValueType {
  DType dtype;
  std::vector<int64_t> shape;
  Device device;
  size_t bytes = 0;
};

// A control-flow op for one specialization: its operands' and results' types.
struct PreparedControlFlow {
  const ControlFlowOp* op;
  std::vector<ValueType> operands, results;
};

struct ControlFlowInstance {
  const PreparedControlFlow* prepared;
  // Per region, the context that runs it for this op in this request.
  std::vector<std::unique_ptr<RequestContext::Impl>> contexts;
  uint8_t predicate = 0;  // the loop condition's i1 output
  int64_t iterations = -1;
};

int32_t Fail(BrtErrorBuffer* error, const std::string& message) {
  std::snprintf(error->message, sizeof(error->message), "%s", message.c_str());
  return BRT_ERROR_INTERNAL;
}

int32_t Fail(BrtErrorBuffer* error, const std::string& what, const Status& status) {
  std::snprintf(error->message, sizeof(error->message), "%s: %s", what.c_str(),
                status.message().c_str());
  return status.code() == StatusCode::kInvalidArgument ? BRT_ERROR_INVALID_ARGUMENT
                                                       : BRT_ERROR_INTERNAL;
}

// Copies `bytes` between two buffers on `device` (host memory on the CPU).
Status CopyOn(Session::Impl& s, Device device, void* dst, const void* src, size_t bytes) {
  if (!bytes || dst == src) return Status::Ok();
  if (device.kind == DeviceKind::kCpu) {
    std::memcpy(dst, src, bytes);
    return Status::Ok();
  }
  const LoadedProvider* p = s.ProviderFor(device.kind);
  if (!p || !p->api->copy)
    return Status(StatusCode::kUnsupported,
                  std::string("no loaded provider copies on ") + DeviceKindName(device.kind));
  BrtErrorBuffer err{};
  if (const int32_t rc = p->api->copy(device.ordinal, dst, src, bytes, 2, nullptr, &err);
      rc != BRT_OK)
    return core::ProviderError(rc, err.message);
  return Status::Ok();
}

Tensor Borrowed(void* data, const ValueType& t) {
  return Tensor::Borrow(data, t.dtype, t.shape, t.device);
}

// Binds region context `ctx`'s inputs, in order, to `inputs`.
void BindInputs(RequestContext::Impl& ctx, const std::vector<void*>& inputs,
                const std::vector<const ValueType*>& types) {
  const std::vector<int>& args = ctx.fs->info.input_indices;
  for (size_t k = 0; k < args.size(); ++k) ctx.bindings[args[k]] = Borrowed(inputs[k], *types[k]);
}

int32_t RunWhile(ControlFlowInstance& in, void* const* buffers, BrtErrorBuffer* error) {
  const PreparedControlFlow& p = *in.prepared;
  Session::Impl& s = *p.op->s;
  const size_t carried = p.results.size();
  void* const* operands = buffers;
  void* const* results = buffers + p.operands.size();
  // The carried values live in the results' buffers from the start; the
  // body updates them in place (or, where it cannot, the loop copies back).
  for (size_t k = 0; k < carried; ++k)
    if (Status st = CopyOn(s, p.results[k].device, results[k], operands[k], p.results[k].bytes);
        !st.ok())
      return Fail(error, "starting the loop", st);
  std::vector<void*> inputs(operands, operands + p.operands.size());
  std::vector<const ValueType*> types;
  for (size_t k = 0; k < p.operands.size(); ++k) {
    if (k < carried) inputs[k] = results[k];
    types.push_back(&p.operands[k]);
  }
  RequestContext::Impl& cond = *in.contexts[0];
  RequestContext::Impl& body = *in.contexts[1];
  BindInputs(cond, inputs, types);
  cond.bindings[cond.fs->info.output_indices[0]] =
      Tensor::Borrow(&in.predicate, DType::kI1, {}, Device{});
  BindInputs(body, inputs, types);
  if (Status st = cond.PrepareRun(); !st.ok()) return Fail(error, "condition", st);
  if (Status st = body.PrepareRun(); !st.ok()) return Fail(error, "body", st);
  const std::vector<int>& body_outputs = body.fs->info.output_indices;
  in.iterations = 0;
  for (;; ++in.iterations) {
    if (Status st = cond.ExecuteHere(); !st.ok()) return Fail(error, "condition", st);
    if (!in.predicate) break;
    if (in.iterations == s.max_loop_iterations && s.max_loop_iterations > 0)
      return Fail(error, "the loop ran " + std::to_string(in.iterations) +
                             " iterations without its condition turning false "
                             "(SessionOptions::max_loop_iterations)");
    if (Status st = body.ExecuteHere(); !st.ok()) return Fail(error, "body", st);
    for (size_t k = 0; k < carried; ++k)
      if (Status st = CopyOn(s, p.results[k].device, results[k],
                             body.outputs[body_outputs[k]].data(), p.results[k].bytes);
          !st.ok())
        return Fail(error, "carrying the body's result " + std::to_string(k), st);
  }
  return BRT_OK;
}

// The branch a case's index (i32) or an if's predicate (i1) takes.
Expected<size_t> TakenBranch(const PreparedControlFlow& p, const void* index) {
  const ValueType& t = p.operands[0];
  int32_t value = 0;
  if (t.device.kind == DeviceKind::kCpu) {
    std::memcpy(&value, index, t.bytes);
  } else {
    const LoadedProvider* provider = p.op->s->ProviderFor(t.device.kind);
    BrtErrorBuffer err{};
    if (const int32_t rc =
            provider->api->copy(t.device.ordinal, &value, index, t.bytes, 1, nullptr, &err);
        rc != BRT_OK)
      return core::ProviderError(rc, std::string("reading the branch index: ") + err.message);
  }
  const size_t n = p.op->regions.size();
  if (t.dtype == DType::kI1) return (value & 1) ? 0 : 1;
  return value < 0 || static_cast<size_t>(value) >= n ? n - 1 : static_cast<size_t>(value);
}

int32_t RunCase(ControlFlowInstance& in, void* const* buffers, BrtErrorBuffer* error) {
  const PreparedControlFlow& p = *in.prepared;
  auto taken = TakenBranch(p, buffers[0]);
  if (!taken.ok()) return Fail(error, "case", taken.status());
  RequestContext::Impl& branch = *in.contexts[*taken];
  std::vector<void*> inputs(buffers + 1, buffers + p.operands.size());
  std::vector<const ValueType*> types;
  for (size_t k = 1; k < p.operands.size(); ++k) types.push_back(&p.operands[k]);
  BindInputs(branch, inputs, types);
  void* const* results = buffers + p.operands.size();
  const std::vector<int>& outputs = branch.fs->info.output_indices;
  for (size_t k = 0; k < outputs.size(); ++k)
    branch.bindings[outputs[k]] = Borrowed(results[k], p.results[k]);
  const std::string what = "branch " + std::to_string(*taken);
  if (Status st = branch.PrepareRun(); !st.ok()) return Fail(error, what, st);
  if (Status st = branch.ExecuteHere(); !st.ok()) return Fail(error, what, st);
  in.iterations = static_cast<int64_t>(*taken);
  return BRT_OK;
}

int32_t Prepare(const void* kernel_data, const BrtOpDesc* desc, void** state,
                BrtErrorBuffer* error) {
  const auto* op = static_cast<const ControlFlowOp*>(kernel_data);
  auto prepared = std::make_unique<PreparedControlFlow>();
  prepared->op = op;
  auto read = [&](const BrtTensorDesc& d, Device device) {
    ValueType t{static_cast<DType>(d.dtype), std::vector<int64_t>(d.dims, d.dims + d.rank), device};
    t.bytes = DTypeSize(t.dtype);
    for (int64_t n : t.shape) t.bytes *= static_cast<size_t>(n);
    return t;
  };
  for (int32_t k = 0; k < desc->num_operands; ++k)
    prepared->operands.push_back(read(desc->operands[k], op->devices[k]));
  for (int32_t k = 0; k < desc->num_results; ++k)
    prepared->results.push_back(read(desc->results[k], op->devices[desc->num_operands + k]));
  // A loop's results start as copies of its carried operands.
  if (op->is_while)
    for (size_t k = 0; k < prepared->results.size(); ++k)
      if (prepared->results[k].shape != prepared->operands[k].shape)
        return Fail(error, "result " + std::to_string(k) + " has shape " +
                               FormatShape(prepared->results[k].shape) + " but carried operand " +
                               std::to_string(k) + " has " +
                               FormatShape(prepared->operands[k].shape));
  *state = prepared.release();
  return BRT_OK;
}

void ReleaseState(void* state) { delete static_cast<PreparedControlFlow*>(state); }

int32_t CreateInstance(void* state, void** instance, BrtErrorBuffer*) {
  auto in = std::make_unique<ControlFlowInstance>();
  in->prepared = static_cast<const PreparedControlFlow*>(state);
  for (FunctionState* region : in->prepared->op->regions) {
    auto ctx = std::make_unique<RequestContext::Impl>();
    ctx->s = in->prepared->op->s;
    ctx->fs = region;
    ctx->bindings.resize(region->info.arguments.size());
    ctx->outputs.resize(region->info.arguments.size());
    in->contexts.push_back(std::move(ctx));
  }
  *instance = in.release();
  return BRT_OK;
}

void ReleaseInstance(void* instance) { delete static_cast<ControlFlowInstance*>(instance); }

int32_t Run(void* instance, void* const* buffers, void*, BrtErrorBuffer* error) {
  auto& in = *static_cast<ControlFlowInstance*>(instance);
  return in.prepared->op->is_while ? RunWhile(in, buffers, error) : RunCase(in, buffers, error);
}

// Whether region `fs`'s inputs and outputs are `inputs` and `outputs`, in
// order; `what` names the region in the message. Its first `in_place`
// inputs may be state, each written in place by the output of its position
// (a loop body's carried values); the others are only read.
Status CheckRegion(const ControlFlowOp& op, const std::string& what, const FunctionState& fs,
                   const std::vector<const ValueMeta*>& inputs,
                   const std::vector<const ValueMeta*>& outputs, size_t in_place) {
  auto bad = [&](const std::string& message) {
    return Status(StatusCode::kInvalidExecutable,
                  op.where + ": its " + what + ", function '" + fs.info.name + "', " + message);
  };
  const auto& args = fs.info.arguments;
  const auto& in = fs.info.input_indices;
  const auto& out = fs.info.output_indices;
  if (in.size() != inputs.size() || out.size() != outputs.size())
    return bad("takes " + std::to_string(in.size()) + " inputs and returns " +
               std::to_string(out.size()) + " values; the op needs " +
               std::to_string(inputs.size()) + " and " + std::to_string(outputs.size()));
  auto same = [&](const ArgumentInfo& a, const ValueMeta& v) {
    if (a.dtype != v.dtype || a.device != v.device || a.shape.size() != v.dims.size()) return false;
    for (size_t d = 0; d < v.dims.size(); ++d)
      if (a.shape[d].is_static() && v.dims[d].is_static() && a.shape[d].size != v.dims[d].size)
        return false;
    return true;
  };
  auto type = [](DType t, const std::vector<Dim>& dims, Device d) {
    return std::string(DTypeName(t)) + FormatDims(dims) + " on " + DeviceKindName(d.kind);
  };
  for (size_t k = 0; k < in.size(); ++k) {
    const ArgumentInfo& a = args[in[k]];
    if (!same(a, *inputs[k]))
      return bad("input '" + a.name + "' is " + type(a.dtype, a.shape, a.device) +
                 ", but the op passes " +
                 type(inputs[k]->dtype, inputs[k]->dims, inputs[k]->device));
    if (a.role == ArgRole::kState && k >= in_place)
      return bad("input '" + a.name + "' is state, but the region may only read it");
  }
  for (size_t k = 0; k < out.size(); ++k) {
    const ArgumentInfo& a = args[out[k]];
    if (!same(a, *outputs[k]))
      return bad("output '" + a.name + "' is " + type(a.dtype, a.shape, a.device) +
                 ", but the op needs " +
                 type(outputs[k]->dtype, outputs[k]->dims, outputs[k]->device));
    if (a.alias_argument >= 0 && (k >= in_place || a.alias_argument != in[k]))
      return bad("output '" + a.name + "' is written in place of another value than input " +
                 std::to_string(k));
  }
  return Status::Ok();
}

}  // namespace

const LoadedProvider* ControlFlowProvider() {
  static const BrtProviderApi api = [] {
    BrtProviderApi a{};
    a.struct_size = sizeof(BrtProviderApi);
    a.abi_version = BRT_PROVIDER_ABI_VERSION;
    a.name = "brt core (control flow)";
    a.device_kind = BRT_DEVICE_CPU;
    return a;
  }();
  static const LoadedProvider provider{"(built in)", &api};
  return &provider;
}

bool IsControlFlowKind(const std::string& kind) { return kind == "while" || kind == "case"; }

int64_t ControlFlowIterations(const void* instance) {
  return static_cast<const ControlFlowInstance*>(instance)->iterations;
}

Status Session::Impl::LinkControlFlow() {
  for (size_t f = 0; f < functions.size(); ++f) {
    FunctionState& fs = *functions[f];
    for (ResolvedOp& r : fs.ops) {
      if (!r.control) continue;
      ControlFlowOp& op = *r.control;
      auto bad = [&](const std::string& message) {
        return Status(StatusCode::kInvalidExecutable, op.where + ": " + message);
      };
      op.s = this;
      op.is_while = r.kind == "while";
      std::vector<int64_t> indices;  // in the executable: cond and body, or the branches
      if (op.is_while) indices.assign(2, -1);
      for (const BrtAttr& a : r.attrs) {
        const std::string_view name = a.name;
        if (op.is_while && (name == "cond" || name == "body"))
          indices[name == "body"] = a.i;
        else if (!op.is_while && name == "branches")
          indices.assign(a.ints, a.ints + a.num_ints);
      }
      if (indices.empty()) return bad("has no branches");
      for (int64_t index : indices) {
        // Regions come after their user, so they cannot recurse.
        if (index <= static_cast<int64_t>(f) || index >= static_cast<int64_t>(functions.size()))
          return bad("names function #" + std::to_string(index) +
                     " as a region; it must be one of the executable's functions after #" +
                     std::to_string(f) + " (there are " + std::to_string(functions.size()) + ")");
        if (!exe.root->functions()->Get(static_cast<size_t>(index))->region())
          return bad("names function '" + functions[index]->info.name +
                     "', which is not marked as a region");
        op.regions.push_back(functions[index].get());
      }
      std::vector<const ValueMeta*> operands, results;
      for (uint32_t v : r.operands) operands.push_back(&fs.values[v]);
      for (uint32_t v : r.results) results.push_back(&fs.values[v]);
      for (const ValueMeta* v : operands) op.devices.push_back(v->device);
      for (const ValueMeta* v : results) op.devices.push_back(v->device);
      if (op.is_while) {
        if (results.size() > operands.size())
          return bad("has more results than operands (the carried values come first)");
        for (size_t k = 0; k < results.size(); ++k)
          if (results[k]->dtype != operands[k]->dtype || results[k]->dims != operands[k]->dims ||
              results[k]->device != operands[k]->device)
            return bad("result " + std::to_string(k) + " is not of carried operand " +
                       std::to_string(k) + "'s type");
        const FunctionState& cond = *op.regions[0];
        // The condition's one output: an i1 scalar, on whichever device.
        const ValueMeta predicate{DType::kI1,
                                  {},
                                  cond.info.output_indices.size() == 1
                                      ? cond.info.arguments[cond.info.output_indices[0]].device
                                      : Device{}};
        BRT_RETURN_IF_ERROR(CheckRegion(op, "condition", cond, operands, {&predicate}, 0));
        BRT_RETURN_IF_ERROR(
            CheckRegion(op, "body", *op.regions[1], operands, results, results.size()));
      } else {
        const ValueMeta& index = *operands[0];
        if ((index.dtype != DType::kI32 && index.dtype != DType::kI1) || !index.dims.empty())
          return bad(std::string("operand 0 must be an i32 index or an i1 predicate of rank 0, "
                                 "got ") +
                     DTypeName(index.dtype) + FormatDims(index.dims));
        if (index.dtype == DType::kI1 && op.regions.size() != 2)
          return bad("an i1 predicate needs exactly two branches");
        std::vector<const ValueMeta*> inputs(operands.begin() + 1, operands.end());
        for (size_t b = 0; b < op.regions.size(); ++b)
          BRT_RETURN_IF_ERROR(
              CheckRegion(op, "branch " + std::to_string(b), *op.regions[b], inputs, results, 0));
      }
      r.kernel = BrtKernel{.struct_size = sizeof(BrtKernel),
                           .kernel_data = &op,
                           .prepare = Prepare,
                           .release_state = ReleaseState,
                           .create_instance = CreateInstance,
                           .release_instance = ReleaseInstance,
                           .run = Run,
                           .flags = BRT_KERNEL_NOT_CAPTURABLE};
    }
  }
  return Status::Ok();
}

}  // namespace brt

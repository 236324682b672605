// The RequestContext API: binding tensors (checked against the function's
// signature), Run/RunAsync/Wait, outputs, queues, profiling and graph
// capture switches. One thread at a time per context.
#include "session_impl.h"

#include <cstring>

#include "brt/safetensors.h"

namespace brt {

void RequestContext::Impl::ReleaseInstances() {
  if (!spec) return;
  for (size_t i = 0; i < instances.size(); ++i) {
    const PreparedOp& op = spec->ops[i];
    if (op.kernel.release_instance && instances[i] != op.state)
      op.kernel.release_instance(instances[i]);
  }
  instances.clear();
}

Expected<size_t> RequestContext::Impl::Find(ArgRef ref) const {
  const auto& args = fs->info.arguments;
  if (!ref.by_name()) {
    if (ref.index() < 0 || static_cast<size_t>(ref.index()) >= args.size())
      return Status(StatusCode::kInvalidArgument, "argument index " + std::to_string(ref.index()) +
                                                      " is out of range: function '" +
                                                      fs->info.name + "' has " +
                                                      std::to_string(args.size()) + " arguments");
    return static_cast<size_t>(ref.index());
  }
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == ref.name()) return i;
  std::string names;
  for (const auto& a : args) names += (names.empty() ? "" : ", ") + a.name;
  return Status(StatusCode::kNotFound, "function '" + fs->info.name + "' has no argument named '" +
                                           std::string(ref.name()) + "' (it has: " + names + ")");
}

Status RequestContext::Impl::CheckTensor(size_t arg, const Tensor& t) const {
  const ArgumentInfo& info = fs->info.arguments[arg];
  auto bad = [&](const std::string& what) {
    return Status(StatusCode::kInvalidArgument, "argument " + ArgName(arg) + ": " + what);
  };
  if (info.role == ArgRole::kWeight)
    return bad("is a weight stored in the executable; it cannot be bound");
  if (!t.defined()) return bad("the tensor is empty (no dtype)");
  if (t.dtype() != info.dtype)
    return bad(std::string("expected dtype ") + DTypeName(info.dtype) + ", got " +
               DTypeName(t.dtype()));
  if (t.shape().size() != info.shape.size())
    return bad("expected rank " + std::to_string(info.shape.size()) + " " + FormatDims(info.shape) +
               ", got rank " + std::to_string(t.shape().size()) + " " + FormatShape(t.shape()));
  for (size_t d = 0; d < info.shape.size(); ++d) {
    if (t.shape()[d] < 0) return bad("negative dimension in shape " + FormatShape(t.shape()));
    if (info.shape[d].is_static() && info.shape[d].size != t.shape()[d])
      return bad("expected shape " + FormatDims(info.shape) + ", got " + FormatShape(t.shape()));
  }
  if (!NumElements(t.shape())) return bad("shape " + FormatShape(t.shape()) + " is too large");
  if (t.device() != info.device) {
    // Host <-> device differences are bridged by copies on the request's queue.
    const bool host_and_device =
        (t.device().kind == DeviceKind::kCpu) != (info.device.kind == DeviceKind::kCpu);
    const DeviceKind device_side =
        t.device().kind == DeviceKind::kCpu ? info.device.kind : t.device().kind;
    if (!host_and_device || !s->ProviderFor(device_side) || info.role == ArgRole::kState)
      return bad(std::string("expected a tensor on ") + DeviceKindName(info.device.kind) + ":" +
                 std::to_string(info.device.ordinal) + ", got one on " +
                 DeviceKindName(t.device().kind) + ":" + std::to_string(t.device().ordinal) +
                 (info.role == ArgRole::kState ? " (state is updated in place, so it must be "
                                                 "bound on its own device)"
                                               : ""));
  }
  if (t.num_elements() > 0 && !t.data()) return bad("data pointer is null");
  if (reinterpret_cast<uintptr_t>(t.data()) % DTypeSize(t.dtype()) != 0)
    return bad("data pointer is not aligned to its " + std::to_string(DTypeSize(t.dtype())) +
               "-byte element size");
  return Status::Ok();
}

Expected<Tensor> RequestContext::Impl::OwnedCopy(size_t arg, const Tensor& host,
                                                 Device device) const {
  auto block = s->CopyTo(device, "argument " + ArgName(arg), host.data(), host.num_bytes());
  if (!block.ok()) return block.status();
  std::shared_ptr<void> owner = std::move(block).value();
  void* p = owner.get();
  return Tensor::Adopt(
      p, host.dtype(), host.shape(), [owner](void*) mutable { owner.reset(); }, device);
}

Expected<Tensor> RequestContext::Impl::OnHost(size_t arg, const Tensor& t) const {
  if (t.device().kind == DeviceKind::kCpu) return t;
  const LoadedProvider* p = s->ProviderFor(t.device().kind);
  if (!p || !p->api->copy)
    return Status(StatusCode::kUnsupported, "argument " + ArgName(arg) + " lives on " +
                                                DeviceKindName(t.device().kind) +
                                                ", and no loaded provider can copy from it");
  Tensor host = Tensor::Allocate(t.dtype(), t.shape());
  BrtErrorBuffer err{};
  const int32_t rc = t.num_bytes() ? p->api->copy(t.device().ordinal, host.data(), t.data(),
                                                  t.num_bytes(), 1, nullptr, &err)
                                   : BRT_OK;
  if (rc != BRT_OK)
    return core::ProviderError(rc, "copying argument " + ArgName(arg) + " from " +
                                       DeviceKindName(t.device().kind) + ": " + err.message);
  return host;
}

RequestContext::RequestContext(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RequestContext::~RequestContext() {
  if (impl_ && impl_->in_flight) (void)Wait();
}

const FunctionInfo& RequestContext::function() const { return impl_->fs->info; }

Status RequestContext::Bind(ArgRef ref, const Tensor& tensor, Ownership ownership) {
  if (impl_->in_flight)
    return Status(StatusCode::kFailedPrecondition,
                  "cannot bind while a run is in flight; call Wait() first");
  auto arg = impl_->Find(ref);
  if (!arg.ok()) return arg.status();
  const ArgumentInfo& info = impl_->fs->info.arguments[*arg];
  const bool upload = ownership == Ownership::kCopied && info.role == ArgRole::kState &&
                      tensor.device().kind == DeviceKind::kCpu;
  BRT_RETURN_IF_ERROR(impl_->CheckTensor(
      *arg, upload ? Tensor::Borrow(tensor.data(), tensor.dtype(), tensor.shape(), info.device)
                   : tensor));
  if (info.role == ArgRole::kOutput && info.alias_argument >= 0)
    return Status(StatusCode::kInvalidArgument,
                  "output " + impl_->ArgName(*arg) + " is written in place of " +
                      impl_->ArgName(info.alias_argument) + "; bind that one instead");
  Tensor bound = tensor;
  if (ownership == Ownership::kCopied) {
    if (tensor.device().kind != DeviceKind::kCpu)
      return Status(StatusCode::kUnsupported,
                    "argument " + impl_->ArgName(*arg) +
                        ": copied binding of device memory is not supported yet");
    // A state lives on its own device: a host value is uploaded there.
    const Device where = info.role == ArgRole::kState ? info.device : tensor.device();
    auto copy = impl_->OwnedCopy(*arg, tensor, where);
    if (!copy.ok()) return copy.status();
    bound = std::move(copy).value();
  } else if (ownership == Ownership::kBorrowed) {
    bound = Tensor::Borrow(tensor.data(), tensor.dtype(), tensor.shape(), tensor.device());
  }
  // Its own symbolic dims must agree; with the other arguments' they are
  // checked when the run starts, so that the arguments of a new shape can be
  // bound one after another.
  Tensor previous = impl_->bindings[*arg];
  impl_->bindings[*arg] = bound;
  Status symbols = impl_->ResolveSymbols(false, static_cast<int>(*arg));
  if (!symbols.ok()) impl_->bindings[*arg] = previous;
  return symbols;
}

Status RequestContext::Unbind(ArgRef ref) {
  if (impl_->in_flight)
    return Status(StatusCode::kFailedPrecondition, "cannot unbind while a run is in flight");
  auto arg = impl_->Find(ref);
  if (!arg.ok()) return arg.status();
  impl_->bindings[*arg] = Tensor();
  return Status::Ok();
}

Status RequestContext::RunAsync() {
  if (impl_->in_flight)
    return Status(StatusCode::kFailedPrecondition, "a run is already in flight; call Wait() first");
  BRT_RETURN_IF_ERROR(impl_->PrepareRun());
  if (!impl_->queue) impl_->queue = std::make_unique<core::ThreadQueue>();
  impl_->in_flight = true;
  impl_->async_status = Status::Ok();
  Impl* impl = impl_.get();
  impl_->queue->Submit([impl] { impl->async_status = impl->Execute(); });
  return Status::Ok();
}

Status RequestContext::Wait() {
  if (!impl_->in_flight) return Status::Ok();
  impl_->queue->Drain();
  impl_->in_flight = false;
  return impl_->async_status;
}

Status RequestContext::Run() {
  if (impl_->in_flight)
    return Status(StatusCode::kFailedPrecondition, "a run is already in flight; call Wait() first");
  BRT_RETURN_IF_ERROR(impl_->PrepareRun());
  return impl_->Execute();
}

Expected<Tensor> RequestContext::Output(ArgRef ref) const {
  auto arg = impl_->Find(ref);
  if (!arg.ok()) return arg.status();
  if (impl_->fs->info.arguments[*arg].role != ArgRole::kOutput)
    return Status(StatusCode::kInvalidArgument,
                  "argument " + impl_->ArgName(*arg) + " is not an output");
  if (impl_->in_flight)
    return Status(
        StatusCode::kFailedPrecondition,
        "output " + impl_->ArgName(*arg) + ": the run is still in flight; call Wait() first");
  if (!impl_->outputs[*arg].defined())
    return Status(
        StatusCode::kFailedPrecondition,
        "output " + impl_->ArgName(*arg) + " has not been produced yet: call Run() first");
  return impl_->outputs[*arg];
}

Expected<Tensor> RequestContext::OutputOnHost(ArgRef ref) const {
  auto out = Output(ref);
  if (!out.ok()) return out.status();
  auto arg = impl_->Find(ref);
  return impl_->OnHost(*arg, *out);
}

Expected<Tensor> RequestContext::State(ArgRef ref) const {
  auto arg = impl_->Find(ref);
  if (!arg.ok()) return arg.status();
  if (impl_->fs->info.arguments[*arg].role != ArgRole::kState)
    return Status(StatusCode::kInvalidArgument,
                  "argument " + impl_->ArgName(*arg) + " is " +
                      ArgRoleName(impl_->fs->info.arguments[*arg].role) + ", not state");
  if (impl_->in_flight)
    return Status(StatusCode::kFailedPrecondition,
                  "state " + impl_->ArgName(*arg) + ": a run is in flight; call Wait() first");
  if (!impl_->bindings[*arg].defined())
    return Status(StatusCode::kFailedPrecondition,
                  "state " + impl_->ArgName(*arg) + " is not bound (Bind or LoadState it)");
  return impl_->bindings[*arg];
}

Status RequestContext::SaveState(const std::string& path) const {
  std::vector<NamedTensor> tensors;
  const auto& args = impl_->fs->info.arguments;
  for (size_t a = 0; a < args.size(); ++a) {
    if (args[a].role != ArgRole::kState) continue;
    auto value = State(a);
    if (!value.ok()) return value.status();
    auto host = impl_->OnHost(a, *value);
    if (!host.ok()) return host.status();
    tensors.push_back({args[a].name, std::move(host).value()});
  }
  if (tensors.empty())
    return Status(StatusCode::kFailedPrecondition,
                  "function '" + impl_->fs->info.name + "' has no state arguments to save");
  return WriteSafetensors(
      path, tensors,
      {{"format", "brt"}, {"function", impl_->fs->info.name}, {"producer", impl_->s->producer}});
}

Status RequestContext::LoadState(const std::string& path) {
  if (impl_->in_flight)
    return Status(StatusCode::kFailedPrecondition,
                  "cannot load state while a run is in flight; call Wait() first");
  auto file = ReadSafetensors(path);
  if (!file.ok()) return file.status();
  const auto& args = impl_->fs->info.arguments;
  std::map<std::string, const Tensor*> in_file;
  for (const NamedTensor& t : file->tensors) in_file[t.name] = &t.tensor;
  std::vector<std::pair<size_t, const Tensor*>> found;
  std::string missing;
  for (size_t a = 0; a < args.size(); ++a) {
    if (args[a].role != ArgRole::kState) continue;
    auto it = in_file.find(args[a].name);
    if (it == in_file.end()) {
      missing += (missing.empty() ? "" : ", ") + args[a].name;
      continue;
    }
    found.emplace_back(a, it->second);
    in_file.erase(it);
  }
  std::string unexpected;
  for (const auto& [name, t] : in_file) unexpected += (unexpected.empty() ? "" : ", ") + name;
  if (!missing.empty() || !unexpected.empty())
    return Status(StatusCode::kInvalidArgument,
                  "'" + path + "' does not hold the state of function '" + impl_->fs->info.name +
                      "'" + (missing.empty() ? "" : "; missing: " + missing) +
                      (unexpected.empty() ? "" : "; not state here: " + unexpected));
  // Checked and copied before any is bound, so a bad file changes nothing.
  std::vector<std::pair<size_t, Tensor>> copies;
  for (const auto& [a, t] : found) {
    BRT_RETURN_IF_ERROR(
        impl_->CheckTensor(a, Tensor::Borrow(t->data(), t->dtype(), t->shape(), args[a].device)));
    auto copy = impl_->OwnedCopy(a, *t, args[a].device);
    if (!copy.ok()) return copy.status();
    copies.emplace_back(a, std::move(copy).value());
  }
  std::vector<Tensor> previous = impl_->bindings;
  for (auto& [a, t] : copies) impl_->bindings[a] = std::move(t);
  Status symbols = impl_->ResolveSymbols(false);
  if (!symbols.ok()) impl_->bindings = std::move(previous);
  return symbols;
}

void RequestContext::SetProfiling(bool enabled) { impl_->profiling = enabled; }

Status RequestContext::SetQueue(Device device, void* native_queue) {
  return impl_->InstallQueue(device, /*wrap=*/true, native_queue);
}

Status RequestContext::UseOwnQueue(Device device) {
  return impl_->InstallQueue(device, /*wrap=*/false, nullptr);
}

void RequestContext::SetGraphCapture(bool enabled) {
  impl_->graphs_enabled = enabled;
  if (enabled) return;
  impl_->DropGraph();
  impl_->DropShapeGraphs();
}

bool RequestContext::last_run_replayed_graph() const { return impl_->replayed; }

ShapeGraphStats RequestContext::graph_stats() const {
  ShapeGraphStats stats = impl_->graph_stats;
  stats.kept = static_cast<int64_t>(impl_->shape_graphs.size());
  return stats;
}

const std::vector<OpProfile>& RequestContext::profile() const { return impl_->last_profile; }

Expected<std::vector<Tensor>> RequestContext::Outputs() const {
  std::vector<Tensor> out;
  for (int a : impl_->fs->info.output_indices) {
    auto t = Output(a);
    if (!t.ok()) return t.status();
    out.push_back(*t);
  }
  return out;
}

}  // namespace brt

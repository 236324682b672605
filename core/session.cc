#include "brt/session.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

#include "allocator.h"
#include "format.h"
#include "memory_planner.h"
#include "op_schema.h"
#include "plugin_loader.h"
#include "work_queue.h"

namespace brt {

using core::FindOpSchema;
using core::LoadedProvider;

namespace {

std::string Str(const flatbuffers::String* s) {
  return s ? std::string(s->c_str(), s->size()) : "";
}

template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

// Whether a provider's kernel table lists `kind` (how a plugin declares a
// kind the op registry does not have).
bool AnyProviderDeclares(const std::vector<std::shared_ptr<const LoadedProvider>>& providers,
                         const std::string& kind) {
  for (const auto& p : providers)
    for (int32_t k = 0; k < p->api->kernel_count(); ++k) {
      BrtKernelInfo info{};
      if (p->api->kernel_info(k, &info) == BRT_OK && info.kind && kind == info.kind) return true;
    }
  return false;
}

struct ValueMeta {
  DType dtype;
  std::vector<Dim> dims;
  Device device;
};

struct ResolvedOp {
  std::string kind;
  const LoadedProvider* provider = nullptr;
  BrtKernel kernel{};
  std::vector<uint32_t> operands, results;
  std::vector<BrtAttr> attrs;             // point into the executable's bytes
  const fb::Kernel* generated = nullptr;  // the kernel its "kernel" attribute names
  int stream = 0;                         // device ops on other streams may overlap it
};

// An op prepared for concrete shapes.
struct PreparedOp {
  BrtKernel kernel{};
  void* state = nullptr;
  uint32_t buffers_begin = 0;
};

// A function's ops prepared for one assignment of its symbolic dims, and the
// arena layout for it. Immutable and shared by every context using it.
struct Specialization {
  std::vector<std::vector<int64_t>> shapes;  // per value
  std::vector<size_t> bytes;                 // per value
  std::vector<PreparedOp> ops;
  std::vector<uint32_t> buffer_values;  // per op: operands then results
  std::vector<int> value_arena;         // per value, -1 when not in an arena
  std::vector<int64_t> value_offset;
  std::vector<std::pair<Device, int64_t>> arenas;

  ~Specialization() {
    for (PreparedOp& op : ops)
      if (op.state && op.kernel.release_state) op.kernel.release_state(op.state);
  }
};

struct FunctionState {
  FunctionInfo info;
  const fb::Function* fn = nullptr;
  std::vector<ValueMeta> values;
  std::vector<ResolvedOp> ops;
  std::vector<std::string> symbols;
  bool use_file_plan = false;
  std::vector<const void*> weight_data;       // per argument; null unless a weight
  std::vector<const void*> host_weight_data;  // the same, when it is in host memory
  std::vector<const void*> constant_data;     // per value: a weight's bytes, else null

  std::mutex mu;
  std::map<std::vector<int64_t>, std::shared_ptr<const Specialization>> specializations;
};

std::string SignatureText(const std::vector<DType>& in, const std::vector<DType>& out) {
  std::string s = "(";
  for (size_t i = 0; i < in.size(); ++i) s += (i ? "," : "") + std::string(DTypeName(in[i]));
  s += ") -> (";
  for (size_t i = 0; i < out.size(); ++i) s += (i ? "," : "") + std::string(DTypeName(out[i]));
  return s + ")";
}

}  // namespace

struct Session::Impl {
  core::VerifiedExecutable exe;
  std::string producer;
  std::vector<std::shared_ptr<const LoadedProvider>> providers;
  std::vector<std::unique_ptr<FunctionState>> functions;
  std::vector<FunctionInfo> infos;
  std::shared_ptr<core::Allocator> host_allocator = std::make_shared<core::HostAllocator>();
  std::mutex allocators_mu;
  std::map<std::pair<int, int>, std::shared_ptr<core::Allocator>> device_allocators;
  std::vector<std::shared_ptr<void>> device_weights;  // uploaded once at load

  Status Init(const SessionOptions& options);
  Status InitFunction(const fb::Function& fn, FunctionState* fs);
  Expected<std::shared_ptr<const Specialization>> Specialize(FunctionState& fs,
                                                             const std::vector<int64_t>& symbols);
  std::shared_ptr<core::Allocator> AllocatorFor(Device device);
  // The first loaded provider whose kernels run on this device kind.
  const LoadedProvider* ProviderFor(DeviceKind kind) const {
    for (const auto& p : providers)
      if (p->api->device_kind == static_cast<int32_t>(kind)) return p.get();
    return nullptr;
  }
  Expected<const void*> UploadWeight(const std::string& name, Device device, const void* host,
                                     size_t bytes);
};

Expected<const void*> Session::Impl::UploadWeight(const std::string& name, Device device,
                                                  const void* host, size_t bytes) {
  const LoadedProvider* p = ProviderFor(device.kind);
  if (!p || !p->api->copy)
    return Status(StatusCode::kUnsupported, "weight '" + name + "' lives on " +
                                                DeviceKindName(device.kind) +
                                                ", and no loaded provider can copy to it");
  auto block = core::AllocateShared(AllocatorFor(device), bytes, core::kArenaAlignment);
  if (!block)
    return Status(StatusCode::kResourceExhausted, "cannot allocate " + std::to_string(bytes) +
                                                      " bytes on " + DeviceKindName(device.kind) +
                                                      " for weight '" + name + "'");
  BrtErrorBuffer err{};
  if (bytes && p->api->copy(device.ordinal, block.get(), host, bytes, 0, nullptr, &err) != BRT_OK)
    return Status(StatusCode::kInternal, "uploading weight '" + name + "' to " +
                                             DeviceKindName(device.kind) + ": " + err.message);
  device_weights.push_back(block);
  return static_cast<const void*>(block.get());
}

std::shared_ptr<core::Allocator> Session::Impl::AllocatorFor(Device device) {
  if (device.kind == DeviceKind::kCpu) return host_allocator;
  std::lock_guard<std::mutex> lock(allocators_mu);
  auto key = std::pair(static_cast<int>(device.kind), device.ordinal);
  auto& slot = device_allocators[key];
  // The same provider as ProviderFor: memory, copies and queues of a device
  // all come from the first provider loaded for its kind.
  if (!slot)
    if (const LoadedProvider* p = ProviderFor(device.kind))
      slot = std::make_shared<core::ProviderAllocator>(p->api, device.ordinal);
  return slot;
}

Status Session::Impl::Init(const SessionOptions& options) {
  if (options.providers.empty())
    return Status(StatusCode::kInvalidArgument,
                  "SessionOptions.providers is empty: name at least one provider");
  for (const std::string& name : options.providers) {
    auto p = core::LoadProvider(name, options.search_paths);
    if (!p.ok()) return p.status();
    providers.push_back(*p);
  }
  const fb::Executable& root = *exe.root;
  for (size_t i = 0; i < Len(root.functions()); ++i) {
    auto fs = std::make_unique<FunctionState>();
    BRT_RETURN_IF_ERROR(InitFunction(*root.functions()->Get(i), fs.get()));
    infos.push_back(fs->info);
    functions.push_back(std::move(fs));
  }
  // Static functions are prepared now, so every kernel error shows at load.
  for (auto& fs : functions)
    if (fs->symbols.empty()) {
      auto spec = Specialize(*fs, {});
      if (!spec.ok()) return spec.status();
    }
  return Status::Ok();
}

Status Session::Impl::InitFunction(const fb::Function& fn, FunctionState* fs) {
  fs->fn = &fn;
  fs->info.name = Str(fn.name());
  std::string where = "function '" + fs->info.name + "'";
  for (size_t v = 0; v < Len(fn.values()); ++v) {
    const fb::Value* val = fn.values()->Get(v);
    fs->values.push_back({core::ToDType(val->dtype()), core::ValueDims(*val),
                          Device{core::ToDeviceKind(val->device()), val->device_ordinal()}});
  }
  std::vector<bool> symbol_bound;
  auto note_symbols = [&](const std::vector<Dim>& dims, bool from_input) {
    for (const Dim& d : dims) {
      if (d.is_static()) continue;
      auto it = std::find(fs->symbols.begin(), fs->symbols.end(), d.symbol);
      if (it == fs->symbols.end()) {
        fs->symbols.push_back(d.symbol);
        symbol_bound.push_back(from_input);
      } else if (from_input) {
        symbol_bound[it - fs->symbols.begin()] = true;
      }
    }
  };
  for (size_t a = 0; a < Len(fn.arguments()); ++a) {
    const fb::Argument* arg = fn.arguments()->Get(a);
    const ValueMeta& vm = fs->values[arg->value()];
    ArgumentInfo info{Str(arg->name()), static_cast<ArgRole>(arg->role()),
                      vm.dtype,         vm.dims,
                      vm.device,        arg->alias_argument()};
    const void* weight = nullptr;
    const void* host_weight = nullptr;
    if (info.role == ArgRole::kWeight) {
      const fb::WeightSegment* segment = exe.root->weights()->Get(arg->weight());
      weight = host_weight = exe.bytes.data + segment->offset();
      if (info.device.kind != DeviceKind::kCpu) {
        auto uploaded = UploadWeight(info.name, info.device, host_weight, segment->length());
        if (!uploaded.ok())
          return Status(uploaded.status().code(), where + ": " + uploaded.status().message());
        weight = *uploaded;
        host_weight = nullptr;  // kernels on the host never see it
      }
    }
    if (info.role == ArgRole::kInput || info.role == ArgRole::kState)
      fs->info.input_indices.push_back(static_cast<int>(a));
    if (info.role == ArgRole::kOutput) fs->info.output_indices.push_back(static_cast<int>(a));
    note_symbols(info.shape, info.role == ArgRole::kInput || info.role == ArgRole::kState);
    fs->weight_data.push_back(weight);
    fs->host_weight_data.push_back(host_weight);
    fs->info.arguments.push_back(std::move(info));
  }
  for (const ValueMeta& vm : fs->values) note_symbols(vm.dims, false);
  fs->constant_data.assign(fs->values.size(), nullptr);
  for (size_t a = 0; a < fs->host_weight_data.size(); ++a)
    if (fs->host_weight_data[a])
      fs->constant_data[fn.arguments()->Get(a)->value()] = fs->host_weight_data[a];
  for (size_t s = 0; s < fs->symbols.size(); ++s)
    if (!symbol_bound[s])
      return Status(StatusCode::kInvalidExecutable, where + ": symbolic dimension '" +
                                                        fs->symbols[s] +
                                                        "' does not appear in any input, so it "
                                                        "cannot be determined at run time");
  fs->use_file_plan = fs->symbols.empty() && fn.plan() != nullptr;

  for (size_t i = 0; i < Len(fn.ops()); ++i) {
    const fb::Op* op = fn.ops()->Get(i);
    ResolvedOp r;
    r.kind = Str(op->kind());
    r.stream = op->stream();
    for (size_t k = 0; k < Len(op->operands()); ++k) r.operands.push_back(op->operands()->Get(k));
    for (size_t k = 0; k < Len(op->results()); ++k) r.results.push_back(op->results()->Get(k));
    for (size_t k = 0; k < Len(op->attrs()); ++k) {
      const fb::Attr* a = op->attrs()->Get(k);
      BrtAttr b{};
      b.name = a->name()->c_str();
      b.kind = static_cast<int32_t>(a->kind());
      b.i = a->i();
      b.f = a->f();
      // Empty vectors stay null: FlatBuffers does not align them.
      if (Len(a->ints())) b.ints = a->ints()->data(), b.num_ints = a->ints()->size();
      if (Len(a->floats())) b.floats = a->floats()->data(), b.num_floats = a->floats()->size();
      b.str = a->s() ? a->s()->c_str() : "";
      if (a->bytes()) b.bytes = a->bytes()->data(), b.num_bytes = a->bytes()->size();
      r.attrs.push_back(b);
      if (b.kind == BRT_ATTR_STRING && std::string_view(b.name) == "kernel") {
        for (size_t g = 0; g < Len(exe.root->kernels()) && !r.generated; ++g)
          if (Str(exe.root->kernels()->Get(g)->name()) == b.str)
            r.generated = exe.root->kernels()->Get(g);
        if (!r.generated)
          return Status(StatusCode::kInvalidExecutable,
                        where + " op #" + std::to_string(i) + " '" + r.kind + "' names kernel '" +
                            b.str + "', which the executable's kernel table does not have");
      }
    }
    std::vector<int32_t> in_codes, out_codes;
    std::vector<DType> in_types, out_types;
    for (uint32_t v : r.operands)
      in_types.push_back(fs->values[v].dtype),
          in_codes.push_back(static_cast<int32_t>(fs->values[v].dtype));
    for (uint32_t v : r.results)
      out_types.push_back(fs->values[v].dtype),
          out_codes.push_back(static_cast<int32_t>(fs->values[v].dtype));
    BrtOpSignature sig{sizeof(BrtOpSignature),
                       r.kind.c_str(),
                       static_cast<int32_t>(op->device()),
                       static_cast<int32_t>(in_codes.size()),
                       in_codes.data(),
                       static_cast<int32_t>(out_codes.size()),
                       out_codes.data()};
    if (!FindOpSchema(r.kind) && !AnyProviderDeclares(providers, r.kind))
      return Status(StatusCode::kInvalidExecutable,
                    where + " op #" + std::to_string(i) + " '" + r.kind +
                        "': unknown op kind (not in brt's op registry, brt/ops.def, and no "
                        "loaded provider declares it in its kernel table)");
    std::string tried;
    for (const auto& p : providers) {
      if (p->api->device_kind != sig.device) continue;
      if (p->api->device_count() < 1) {
        tried += (tried.empty() ? "" : "; ") + p->name() + ": it sees no " +
                 DeviceKindName(static_cast<DeviceKind>(sig.device)) + " device";
        continue;
      }
      BrtErrorBuffer err{};
      BrtKernel kernel{};
      if (p->api->resolve_kernel(&sig, &kernel, &err) == BRT_OK && kernel.run && kernel.prepare) {
        r.provider = p.get();
        r.kernel = kernel;
        break;
      }
      tried += (tried.empty() ? "" : "; ") + p->name() + ": " + err.message;
    }
    if (!r.provider)
      return Status(
          StatusCode::kUnsupported,
          where + " op #" + std::to_string(i) + " '" + r.kind + "' " +
              SignatureText(in_types, out_types) + " on " +
              DeviceKindName(static_cast<DeviceKind>(sig.device)) +
              ": no loaded provider can run it (" +
              (tried.empty() ? "no provider for this device is loaded" : "tried " + tried) + ")");
    fs->ops.push_back(std::move(r));
  }
  fs->info.num_ops = static_cast<int>(fs->ops.size());
  return Status::Ok();
}

Expected<std::shared_ptr<const Specialization>> Session::Impl::Specialize(
    FunctionState& fs, const std::vector<int64_t>& symbols) {
  std::lock_guard<std::mutex> lock(fs.mu);
  if (auto it = fs.specializations.find(symbols); it != fs.specializations.end()) return it->second;

  auto spec = std::make_shared<Specialization>();
  std::string where = "function '" + fs.info.name + "'";
  for (size_t v = 0; v < fs.values.size(); ++v) {
    std::vector<int64_t> shape;
    for (const Dim& d : fs.values[v].dims) {
      if (d.is_static()) {
        shape.push_back(d.size);
      } else {
        size_t s = std::find(fs.symbols.begin(), fs.symbols.end(), d.symbol) - fs.symbols.begin();
        shape.push_back(symbols.at(s));
      }
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
      return Status(
          rc == BRT_ERROR_UNSUPPORTED ? StatusCode::kUnsupported : StatusCode::kInvalidExecutable,
          where + " op #" + std::to_string(i) + " '" + r.kind + "' (" + r.provider->name() +
              "): " + err.message);
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
        planned[v] = {static_cast<int64_t>(spec->bytes[v]), static_cast<int>(it - devices.begin()),
                      static_cast<int>(i), static_cast<int>(i)};
      }
      for (uint32_t v : fs.ops[i].operands)
        if (planned[v].arena >= 0) planned[v].last_use = static_cast<int>(i);
    }
    core::MemoryPlanResult r =
        core::PlanMemory(planned, static_cast<int>(devices.size()), core::kArenaAlignment);
    for (size_t d = 0; d < devices.size(); ++d)
      spec->arenas.emplace_back(devices[d], r.arena_sizes[d]);
    for (size_t v = 0; v < fs.values.size(); ++v) {
      spec->value_arena[v] = planned[v].arena;
      spec->value_offset[v] = std::max<int64_t>(r.offsets[v], 0);
    }
  }
  fs.specializations[symbols] = spec;
  return std::shared_ptr<const Specialization>(spec);
}

// ---------------------------------------------------------------------------
// RequestContext

namespace {
struct QueueSlot {
  const LoadedProvider* provider;
  void* queue;
  int stream = 0;
};
}  // namespace

struct RequestContext::Impl {
  std::shared_ptr<const Session> session;
  Session::Impl* s = nullptr;
  FunctionState* fs = nullptr;

  std::vector<Tensor> bindings;  // per argument; undefined when unbound
  std::vector<Tensor> outputs;   // per argument, after a run

  std::vector<int64_t> spec_key;
  std::shared_ptr<const Specialization> spec;
  std::vector<std::shared_ptr<void>> arenas;
  std::vector<void*> instances;  // per op: its instance, or the shared state
  std::vector<void*> value_ptrs;
  std::vector<void*> buffers;
  // The hot loop's view of the ops: just what run() needs, contiguous.
  struct DispatchEntry {
    decltype(BrtKernel::run) run;
    void* instance;
    void* const* buffers;
    void* queue;       // the provider's queue for this context, or null
    bool sync_before;  // wait for every queue first (a host op after device work)
  };
  std::vector<DispatchEntry> dispatch;
  // Per op, only when ops run on several streams (kept out of the hot entries).
  struct StreamOrder {
    uint32_t waits_begin = 0;  // events in `waits` the op's queue waits for first
    uint32_t waits_count = 0;
    void* record = nullptr;  // an event to record after it, when another queue waits
    const BrtProviderApi* api = nullptr;
  };
  std::vector<StreamOrder> order;

  // One work queue per provider and stream (CUDA: a CUDA stream), made on the
  // first run; stream 0 may be the caller's (SetQueue).
  std::vector<std::unique_ptr<QueueSlot>> queues;
  Expected<QueueSlot*> QueueFor(const LoadedProvider* p, int stream = 0);
  // Events ordering the queues of several streams: made once per dispatch
  // build and reused by every run. `waits` lists the events ops wait for;
  // fork makes other streams wait for stream 0 (the staged inputs), join
  // makes stream 0 wait for them (before outputs go back).
  struct EventRec {
    const BrtProviderApi* api;
    void* event;
  };
  std::vector<EventRec> events;
  std::vector<void*> waits;
  struct CrossQueue {
    const BrtProviderApi* api;
    void* event;
    void* from;  // the queue that records it
    void* to;    // the queue that waits for it
  };
  std::vector<CrossQueue> fork, join;
  Expected<void*> NewEvent(const LoadedProvider* p);
  void DropEvents();
  Status Order(const std::vector<CrossQueue>& edges);
  // Copies between a binding and a staging buffer on the argument's device,
  // queued before and after the ops.
  // With page-locked host memory from the provider, the device copy runs
  // between it and the staging buffer asynchronously; the host copies the
  // binding into it before, or out of it after the queues are done.
  struct Transfer {
    QueueSlot* slot;
    int ordinal;
    void* dst;
    const void* src;
    size_t bytes;
    int32_t direction;  // 0 host->device, 1 device->host
    void* pinned;       // page-locked bounce buffer, or null
    void* binding;      // the host binding the bounce buffer stands for
  };
  std::vector<Transfer> before, after;
  struct StagingBuffers {
    std::shared_ptr<void> device, pinned;
    size_t bytes = 0;
  };
  std::vector<StagingBuffers> staging;  // per argument
  Expected<void*> Staging(size_t arg, size_t bytes);
  // The argument's page-locked bounce buffer, or null without one.
  void* Pinned(size_t arg);
  Status AddTransfer(std::vector<Transfer>& list, Device dst_device, void* dst, Device src_device,
                     const void* src, size_t bytes);
  Status RunTransfers(const std::vector<Transfer>& list);
  Status Synchronize();

  // CUDA graphs: the recorded ops and the buffer addresses they were recorded with.
  bool graphs_enabled = true;
  QueueSlot* graph_queue = nullptr;  // set when every op can be recorded on one queue
  void* graph = nullptr;
  std::vector<void*> graph_buffers;
  bool replayed = false;
  // The first run after a dispatch is built (a new specialization or queue)
  // goes op by op: lazy module loading, PTX JIT and the libraries' first
  // calls must not happen inside a capture. Later runs record and replay.
  bool ran_eagerly = false;
  bool graph_fallback_said = false;
  std::string graph_off_reason;  // why the ops cannot be recorded, if so
  Status BuildDispatch();
  Status InstallQueue(Device device, bool wrap, void* native_queue);
  Status OrderStreams(const std::vector<QueueSlot*>& slots);
  void DropGraph();
  Status RunOps();

  std::unique_ptr<core::ThreadQueue> queue;
  bool in_flight = false;
  bool profiling = false;
  std::vector<OpProfile> last_profile;
  Status async_status;
  BrtErrorBuffer error{};

  ~Impl() {
    DropGraph();
    DropEvents();
    ReleaseInstances();
    for (auto& q : queues)
      if (q->queue) q->provider->api->destroy_queue(q->queue);
  }

  Expected<size_t> Find(ArgRef ref) const;
  Status CheckTensor(size_t arg, const Tensor& t) const;
  // Fills symbol_values from the bound arguments (reusing its storage, so a
  // run does not allocate).
  Status ResolveSymbols(bool require_all);
  std::vector<int64_t> symbol_values;
  std::vector<size_t> symbol_source;
  Status PrepareRun();
  Status Execute();
  void ReleaseInstances();
  std::string ArgName(size_t arg) const {
    return "'" + fs->info.arguments[arg].name + "' (argument " + std::to_string(arg) + ")";
  }
};

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

Status RequestContext::Impl::ResolveSymbols(bool require_all) {
  std::vector<int64_t>& values = symbol_values;
  std::vector<size_t>& source = symbol_source;
  values.assign(fs->symbols.size(), -1);
  source.assign(fs->symbols.size(), 0);
  const auto& args = fs->info.arguments;
  for (size_t a = 0; a < args.size(); ++a) {
    if (!bindings[a].defined()) continue;
    for (size_t d = 0; d < args[a].shape.size(); ++d) {
      const Dim& dim = args[a].shape[d];
      if (dim.is_static()) continue;
      size_t s =
          std::find(fs->symbols.begin(), fs->symbols.end(), dim.symbol) - fs->symbols.begin();
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
  if (require_all)
    for (size_t s = 0; s < values.size(); ++s)
      if (values[s] < 0)
        return Status(StatusCode::kFailedPrecondition,
                      "symbolic dimension '" + fs->symbols[s] +
                          "' is not determined: bind the inputs that use it");
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
  if (!spec || symbol_values != spec_key) {
    auto next = s->Specialize(*fs, symbol_values);
    if (!next.ok()) return next.status();
    DropGraph();
    ReleaseInstances();
    arenas.clear();
    spec = *next;
    spec_key = symbol_values;
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
      if (op.kernel.create_instance &&
          op.kernel.create_instance(op.state, &instance, &error) != BRT_OK) {
        instances.push_back(op.state);
        return Status(StatusCode::kResourceExhausted, "function '" + fs->info.name + "' op #" +
                                                          std::to_string(i) + " '" +
                                                          fs->ops[i].kind + "': " + error.message);
      }
      instances.push_back(instance ? instance : op.state);
    }
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
  if (dispatch.size() != spec->ops.size()) return BuildDispatch();
  return Status::Ok();
}

namespace {

bool HasEvents(const BrtProviderApi* api) {
  return BRT_STRUCT_HAS(BrtProviderApi, api, wait_event) && api->create_event &&
         api->destroy_event && api->record_event && api->wait_event;
}

}  // namespace

Status RequestContext::Impl::BuildDispatch() {
  DropGraph();
  DropEvents();
  dispatch.clear();
  graph_queue = nullptr;
  ran_eagerly = false;
  graph_off_reason.clear();
  const size_t n = spec->ops.size();
  std::vector<QueueSlot*> slots(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    const LoadedProvider* p = fs->ops[i].provider;
    if (!p->api->create_queue) continue;
    auto q = QueueFor(p, fs->ops[i].stream);
    if (!q.ok()) return q.status();
    slots[i] = *q;
  }
  bool pending = false;       // device work the host has not waited for
  QueueSlot* only = nullptr;  // the one queue every op runs on, if there is one
  bool one_queue = true;
  for (size_t i = 0; i < n; ++i) {
    QueueSlot* slot = slots[i];
    DispatchEntry e{spec->ops[i].kernel.run, instances[i],
                    buffers.data() + spec->ops[i].buffers_begin, slot ? slot->queue : nullptr,
                    !slot && pending};
    if (!slot) pending = false;
    if (slot) pending = true;
    dispatch.push_back(e);

    const BrtKernel& k = spec->ops[i].kernel;
    if (!slot || (only && slot != only)) one_queue = false;
    only = slot;
    if (graph_off_reason.empty() && BRT_STRUCT_HAS(BrtKernel, &k, flags) &&
        (k.flags & BRT_KERNEL_NOT_CAPTURABLE))
      graph_off_reason =
          "op #" + std::to_string(i) + " '" + fs->ops[i].kind + "' cannot be recorded into a graph";
  }
  const bool several_streams =
      std::any_of(queues.begin(), queues.end(), [](const auto& q) { return q->stream != 0; });
  if (several_streams) BRT_RETURN_IF_ERROR(OrderStreams(slots));
  if (!only) return Status::Ok();  // host work only: nothing to record
  const BrtProviderApi* api = only->provider->api;
  if (!one_queue && graph_off_reason.empty())
    graph_off_reason = "its ops run on more than one queue or on the host";
  if (graph_off_reason.empty() &&
      !(BRT_STRUCT_HAS(BrtProviderApi, api, begin_capture) && api->begin_capture &&
        api->end_capture && api->launch_graph && api->destroy_graph))
    graph_off_reason = "provider '" + only->provider->name() + "' cannot record graphs";
  if (graph_off_reason.empty()) graph_queue = only;
  return Status::Ok();
}

// Device ops on different queues run concurrently unless ordered: op i waits
// for the latest earlier op j on another queue that writes what i touches or
// touches what i writes (memory ranges: arenas reuse bytes). Events are
// recorded only after such a j. Between providers, or without events, the
// host waits instead.
Status RequestContext::Impl::OrderStreams(const std::vector<QueueSlot*>& slots) {
  const size_t n = spec->ops.size();
  auto range = [&](uint32_t v) {
    return std::pair<int64_t, int64_t>(
        spec->value_offset[v], spec->value_offset[v] + static_cast<int64_t>(spec->bytes[v]));
  };
  auto overlap = [&](uint32_t a, uint32_t b) {
    if (a == b) return true;
    const int arena = spec->value_arena[a];
    if (arena < 0 || arena != spec->value_arena[b]) return false;
    const auto [a0, a1] = range(a);
    const auto [b0, b1] = range(b);
    return a0 < b1 && b0 < a1;
  };
  auto touches = [&](const std::vector<uint32_t>& values, const std::vector<uint32_t>& others) {
    for (uint32_t a : values)
      for (uint32_t b : others)
        if (overlap(a, b)) return true;
    return false;
  };
  auto conflict = [&](size_t i, size_t j) {
    const ResolvedOp &a = fs->ops[i], &b = fs->ops[j];
    return touches(b.results, a.operands) || touches(b.results, a.results) ||
           touches(b.operands, a.results);
  };
  order.assign(n, StreamOrder{});
  std::vector<void*> recorded(n, nullptr);
  // waited[{s, t}]: the latest op on queue t that queue s already waits for.
  std::map<std::pair<QueueSlot*, QueueSlot*>, size_t> waited;
  std::vector<std::vector<void*>> op_waits(n);
  for (size_t i = 0; i < n; ++i) {
    QueueSlot* s = slots[i];
    if (!s) continue;
    for (size_t j = i; j-- > 0;) {
      QueueSlot* t = slots[j];
      if (!t || t == s) continue;
      auto seen = waited.find({s, t});
      if (seen != waited.end() && j <= seen->second) continue;
      if (!conflict(i, j)) continue;
      waited[{s, t}] = j;
      if (t->provider != s->provider || !HasEvents(s->provider->api)) {
        dispatch[i].sync_before = true;
        continue;
      }
      if (!recorded[j]) {
        auto e = NewEvent(t->provider);
        if (!e.ok()) return e.status();
        recorded[j] = *e;
      }
      op_waits[i].push_back(recorded[j]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    order[i].record = recorded[i];
    order[i].api = fs->ops[i].provider->api;
    order[i].waits_begin = static_cast<uint32_t>(waits.size());
    order[i].waits_count = static_cast<uint32_t>(op_waits[i].size());
    waits.insert(waits.end(), op_waits[i].begin(), op_waits[i].end());
  }
  // Inputs are staged on stream 0 and outputs copied back from it.
  for (const auto& q : queues) {
    if (q->stream == 0) continue;
    auto main = QueueFor(q->provider, 0);
    if (!main.ok()) return main.status();
    if (!HasEvents(q->provider->api))
      return Status(
          StatusCode::kUnsupported,
          "provider '" + q->provider->name() + "' runs ops on several streams but has no events");
    for (auto* edges : {&fork, &join}) {
      auto e = NewEvent(q->provider);
      if (!e.ok()) return e.status();
      const bool forward = edges == &fork;
      edges->push_back({q->provider->api, *e, forward ? (*main)->queue : q->queue,
                        forward ? q->queue : (*main)->queue});
    }
  }
  return Status::Ok();
}

Expected<void*> RequestContext::Impl::NewEvent(const LoadedProvider* p) {
  void* event = nullptr;
  if (p->api->create_event(0, &event, &error) != BRT_OK)
    return Status(StatusCode::kResourceExhausted,
                  "provider '" + p->name() + "': cannot create an event: " + error.message);
  events.push_back({p->api, event});
  return event;
}

void RequestContext::Impl::DropEvents() {
  for (const EventRec& e : events) e.api->destroy_event(e.event);
  events.clear();
  order.clear();
  waits.clear();
  fork.clear();
  join.clear();
}

Status RequestContext::Impl::Order(const std::vector<CrossQueue>& edges) {
  for (const CrossQueue& c : edges)
    if (c.api->record_event(c.event, c.from, &error) != BRT_OK ||
        c.api->wait_event(c.to, c.event, &error) != BRT_OK)
      return Status(StatusCode::kInternal,
                    "function '" + fs->info.name + "': ordering its streams: " + error.message);
  return Status::Ok();
}

Expected<QueueSlot*> RequestContext::Impl::QueueFor(const LoadedProvider* p, int stream) {
  for (auto& q : queues)
    if (q->provider == p && q->stream == stream) return q.get();
  void* queue = nullptr;
  if (p->api->create_queue(0, &queue, &error) != BRT_OK)
    return Status(StatusCode::kResourceExhausted,
                  "provider '" + p->name() + "': cannot create a work queue: " + error.message);
  queues.push_back(std::make_unique<QueueSlot>(QueueSlot{p, queue, stream}));
  return queues.back().get();
}

Expected<void*> RequestContext::Impl::Staging(size_t arg, size_t bytes) {
  if (staging.size() != fs->info.arguments.size()) staging.resize(fs->info.arguments.size());
  StagingBuffers& st = staging[arg];
  if (!st.device || st.bytes != bytes) {
    st.device = core::AllocateShared(s->AllocatorFor(fs->info.arguments[arg].device), bytes,
                                     core::kArenaAlignment);
    st.pinned.reset();
    st.bytes = bytes;
    if (!st.device)
      return Status(StatusCode::kResourceExhausted,
                    "cannot allocate a " + std::to_string(bytes) + "-byte staging buffer on " +
                        DeviceKindName(fs->info.arguments[arg].device.kind) + " for " +
                        ArgName(arg));
  }
  return st.device.get();
}

void* RequestContext::Impl::Pinned(size_t arg) {
  StagingBuffers& st = staging[arg];
  const BrtProviderApi* api = s->ProviderFor(fs->info.arguments[arg].device.kind)->api;
  if (!st.pinned && BRT_STRUCT_HAS(BrtProviderApi, api, free_host) && api->allocate_host &&
      api->free_host) {
    void* p = api->allocate_host(st.bytes);
    // Without page-locked memory the copy reads the binding directly.
    if (p) st.pinned = std::shared_ptr<void>(p, [free = api->free_host](void* q) { free(q); });
  }
  return st.pinned.get();
}

Status RequestContext::Impl::AddTransfer(std::vector<Transfer>& list, Device dst_device, void* dst,
                                         Device src_device, const void* src, size_t bytes) {
  const Device device = dst_device.kind == DeviceKind::kCpu ? src_device : dst_device;
  auto slot = QueueFor(s->ProviderFor(device.kind));
  if (!slot.ok()) return slot.status();
  list.push_back({*slot, device.ordinal, dst, src, bytes,
                  dst_device.kind == DeviceKind::kCpu ? int32_t{1} : int32_t{0}, nullptr, nullptr});
  return Status::Ok();
}

Status RequestContext::Impl::RunTransfers(const std::vector<Transfer>& list) {
  for (const Transfer& t : list) {
    if (!t.bytes) continue;
    const bool bounce_in = t.pinned && t.direction == 0;
    if (bounce_in) std::memcpy(t.pinned, t.binding, t.bytes);
    void* dst = t.pinned && t.direction == 1 ? t.pinned : t.dst;
    const void* src = bounce_in ? t.pinned : t.src;
    if (t.slot->provider->api->copy(t.ordinal, dst, src, t.bytes, t.direction, t.slot->queue,
                                    &error) != BRT_OK)
      return Status(StatusCode::kInternal,
                    "function '" + fs->info.name + "': copying " + std::to_string(t.bytes) +
                        " bytes " + (t.direction ? "to" : "from") + " the host: " + error.message);
  }
  return Status::Ok();
}

Status RequestContext::Impl::Synchronize() {
  for (auto& q : queues)
    if (q->provider->api->synchronize_queue(q->queue, &error) != BRT_OK)
      return Status(StatusCode::kInternal, "function '" + fs->info.name + "': waiting for '" +
                                               q->provider->name() + "': " + error.message);
  return Status::Ok();
}

void RequestContext::Impl::DropGraph() {
  if (graph && graph_queue) graph_queue->provider->api->destroy_graph(graph);
  graph = nullptr;
  graph_buffers.clear();
}

Status RequestContext::Impl::Execute() {
  replayed = false;
  Status status = RunTransfers(before);
  // Host ops read what came from a device: wait for it first.
  if (status.ok() &&
      std::any_of(before.begin(), before.end(), [](const Transfer& t) { return t.direction == 1; }))
    status = Synchronize();
  if (status.ok()) status = Order(fork);
  if (status.ok()) status = RunOps();
  if (status.ok()) status = Order(join);
  if (status.ok()) status = RunTransfers(after);
  Status synced = Synchronize();
  if (status.ok() && synced.ok())
    for (const Transfer& t : after)
      if (t.pinned && t.bytes) std::memcpy(t.binding, t.pinned, t.bytes);
  return status.ok() ? synced : status;
}

Status RequestContext::Impl::RunOps() {
  const size_t n = dispatch.size();
  const DispatchEntry* ops = dispatch.data();
  auto failed = [&](size_t i) {
    return Status(StatusCode::kInternal, "function '" + fs->info.name + "' op #" +
                                             std::to_string(i) + " '" + fs->ops[i].kind +
                                             "' failed: " + error.message);
  };
  if (profiling) {
    last_profile.resize(n);
    const auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < n; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      if (ops[i].run(ops[i].instance, ops[i].buffers, ops[i].queue, &error) != BRT_OK)
        return failed(i);
      // Device ops are timed to completion.
      if (ops[i].queue && fs->ops[i].provider->api->synchronize_queue(ops[i].queue, &error))
        return failed(i);
      const auto t1 = std::chrono::steady_clock::now();
      last_profile[i] = {static_cast<int>(i), fs->ops[i].kind.c_str(),
                         std::chrono::duration_cast<std::chrono::nanoseconds>(t0 - start).count(),
                         std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()};
    }
    return Status::Ok();
  }
  if (graph_queue && graphs_enabled && ran_eagerly) {
    const BrtProviderApi* api = graph_queue->provider->api;
    if (!graph || graph_buffers != buffers) {
      DropGraph();
      if (api->begin_capture(graph_queue->queue, &error) != BRT_OK) {
        std::fprintf(stderr, "brt: function '%s' runs op by op: starting a graph capture: %s\n",
                     fs->info.name.c_str(), error.message);
        graph_queue = nullptr;
        return RunOps();
      }
      for (size_t i = 0; i < n; ++i)
        if (ops[i].run(ops[i].instance, ops[i].buffers, ops[i].queue, &error) != BRT_OK) {
          Status s = failed(i);
          BrtErrorBuffer ignored{};
          void* partial = nullptr;
          if (api->end_capture(graph_queue->queue, &partial, &ignored) == BRT_OK && partial)
            api->destroy_graph(partial);
          return s;
        }
      if (api->end_capture(graph_queue->queue, &graph, &error) != BRT_OK) {
        graph = nullptr;
        return Status(StatusCode::kInternal,
                      "function '" + fs->info.name + "': recording its graph: " + error.message);
      }
      graph_buffers = buffers;
    }
    if (api->launch_graph(graph, graph_queue->queue, &error) != BRT_OK)
      return Status(StatusCode::kInternal,
                    "function '" + fs->info.name + "': replaying its graph: " + error.message);
    replayed = true;
    return Status::Ok();
  }
  if (graphs_enabled && !graph_off_reason.empty() && !graph_fallback_said) {
    graph_fallback_said = true;
    std::fprintf(stderr, "brt: function '%s' runs op by op, not as a graph: %s\n",
                 fs->info.name.c_str(), graph_off_reason.c_str());
  }
  if (order.empty()) {  // one queue per provider: the hot loop
    for (size_t i = 0; i < n; ++i) {
      if (ops[i].sync_before && !Synchronize().ok()) return failed(i);
      if (ops[i].run(ops[i].instance, ops[i].buffers, ops[i].queue, &error) != BRT_OK)
        return failed(i);
    }
    ran_eagerly = true;
    return Status::Ok();
  }
  for (size_t i = 0; i < n; ++i) {
    const DispatchEntry& op = ops[i];
    const StreamOrder& o = order[i];
    if (op.sync_before && !Synchronize().ok()) return failed(i);
    for (uint32_t w = 0; w < o.waits_count; ++w)
      if (o.api->wait_event(op.queue, waits[o.waits_begin + w], &error) != BRT_OK) return failed(i);
    if (op.run(op.instance, op.buffers, op.queue, &error) != BRT_OK) return failed(i);
    if (o.record && o.api->record_event(o.record, op.queue, &error) != BRT_OK) return failed(i);
  }
  return Status::Ok();
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
  BRT_RETURN_IF_ERROR(impl_->CheckTensor(*arg, tensor));
  const ArgumentInfo& info = impl_->fs->info.arguments[*arg];
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
    auto block = core::AllocateShared(impl_->s->host_allocator, tensor.num_bytes(), 64);
    if (!block)
      return Status(StatusCode::kResourceExhausted, "cannot copy argument " + impl_->ArgName(*arg));
    if (tensor.num_bytes()) std::memcpy(block.get(), tensor.data(), tensor.num_bytes());
    void* p = block.get();
    bound =
        Tensor::Adopt(p, tensor.dtype(), tensor.shape(), [block](void*) mutable { block.reset(); });
  } else if (ownership == Ownership::kBorrowed) {
    bound = Tensor::Borrow(tensor.data(), tensor.dtype(), tensor.shape(), tensor.device());
  }
  Tensor previous = impl_->bindings[*arg];
  impl_->bindings[*arg] = bound;
  Status symbols = impl_->ResolveSymbols(false);
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

void RequestContext::SetProfiling(bool enabled) { impl_->profiling = enabled; }

Status RequestContext::SetQueue(Device device, void* native_queue) {
  return impl_->InstallQueue(device, /*wrap=*/true, native_queue);
}

Status RequestContext::UseOwnQueue(Device device) {
  return impl_->InstallQueue(device, /*wrap=*/false, nullptr);
}

Status RequestContext::Impl::InstallQueue(Device device, bool wrap, void* native_queue) {
  if (in_flight)
    return Status(StatusCode::kFailedPrecondition, "cannot change queues while a run is in flight");
  const LoadedProvider* p = s->ProviderFor(device.kind);
  if (!p || !p->api->create_queue)
    return Status(
        StatusCode::kInvalidArgument,
        std::string("no loaded provider runs work queues on ") + DeviceKindName(device.kind));
  if (wrap && !(BRT_STRUCT_HAS(BrtProviderApi, p->api, wrap_queue) && p->api->wrap_queue))
    return Status(StatusCode::kUnsupported,
                  "provider '" + p->name() + "' cannot run on a caller's queue");
  void* queue = nullptr;
  BrtErrorBuffer err{};
  if (wrap ? p->api->wrap_queue(device.ordinal, native_queue, &queue, &err)
           : p->api->create_queue(device.ordinal, &queue, &err))
    return Status(StatusCode::kInvalidArgument,
                  "provider '" + p->name() + "': cannot use that queue: " + err.message);
  DropGraph();
  auto slot = std::find_if(queues.begin(), queues.end(),
                           [&](const auto& q) { return q->provider == p && q->stream == 0; });
  if (slot == queues.end()) {
    queues.push_back(std::make_unique<QueueSlot>(QueueSlot{p, queue}));
  } else {
    p->api->destroy_queue((*slot)->queue);
    (*slot)->queue = queue;
  }
  dispatch.clear();  // entries and events hold the old queue
  DropEvents();
  return Status::Ok();
}

void RequestContext::SetGraphCapture(bool enabled) {
  impl_->graphs_enabled = enabled;
  if (!enabled) impl_->DropGraph();
}

bool RequestContext::last_run_replayed_graph() const { return impl_->replayed; }

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

// ---------------------------------------------------------------------------
// Session

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

namespace {
Expected<std::shared_ptr<Session>> Finish(
    std::unique_ptr<Session::Impl> impl, core::ExecutableBytes bytes, const SessionOptions& options,
    std::shared_ptr<Session> (*make)(std::unique_ptr<Session::Impl>)) {
  auto verified = core::VerifyExecutable(std::move(bytes));
  if (!verified.ok()) return verified.status();
  impl->exe = std::move(verified).value();
  impl->producer = Str(impl->exe.root->producer());
  BRT_RETURN_IF_ERROR(impl->Init(options));
  return make(std::move(impl));
}
}  // namespace

Expected<std::shared_ptr<Session>> Session::LoadFile(const std::string& path,
                                                     const SessionOptions& options) {
  auto bytes = core::MapFile(path);
  if (!bytes.ok()) return bytes.status();
  auto made = Finish(
      std::make_unique<Impl>(), std::move(bytes).value(), options,
      [](std::unique_ptr<Impl> i) { return std::shared_ptr<Session>(new Session(std::move(i))); });
  if (!made.ok()) return Status(made.status().code(), "'" + path + "': " + made.status().message());
  return made;
}

Expected<std::shared_ptr<Session>> Session::LoadMemory(std::span<const uint8_t> bytes,
                                                       const SessionOptions& options) {
  return Finish(
      std::make_unique<Impl>(), core::CopyBytes(bytes), options,
      [](std::unique_ptr<Impl> i) { return std::shared_ptr<Session>(new Session(std::move(i))); });
}

const std::vector<FunctionInfo>& Session::functions() const { return impl_->infos; }

Expected<const FunctionInfo*> Session::function(std::string_view name) const {
  const auto& infos = impl_->infos;
  if (name.empty()) {
    if (infos.size() == 1) return &infos[0];
    std::string names;
    for (const auto& f : infos) names += (names.empty() ? "" : ", ") + f.name;
    return Status(StatusCode::kInvalidArgument,
                  "the executable has several functions (" + names + "); name one");
  }
  for (const auto& f : infos)
    if (f.name == name) return &f;
  std::string names;
  for (const auto& f : infos) names += (names.empty() ? "" : ", ") + f.name;
  return Status(StatusCode::kNotFound, "no function named '" + std::string(name) +
                                           "' (the executable has: " + names + ")");
}

const std::string& Session::producer() const { return impl_->producer; }

std::vector<std::string> Session::provider_names() const {
  std::vector<std::string> names;
  for (const auto& p : impl_->providers) names.push_back(p->name());
  return names;
}

Expected<std::unique_ptr<RequestContext>> Session::NewRequest(std::string_view function) const {
  auto info = this->function(function);
  if (!info.ok()) return info.status();
  size_t index = *info - impl_->infos.data();
  auto ctx = std::make_unique<RequestContext::Impl>();
  ctx->session = shared_from_this();
  ctx->s = impl_.get();
  ctx->fs = impl_->functions[index].get();
  ctx->bindings.resize((*info)->arguments.size());
  ctx->outputs.resize((*info)->arguments.size());
  return std::unique_ptr<RequestContext>(new RequestContext(std::move(ctx)));
}

AllocatorStats Session::allocator_stats(Device device) const {
  auto a = impl_->AllocatorFor(device);
  return a ? a->stats() : AllocatorStats{};
}

void Session::Trim() {
  impl_->host_allocator->Trim();
  std::lock_guard<std::mutex> lock(impl_->allocators_mu);
  for (auto& [key, a] : impl_->device_allocators) a->Trim();
}

Expected<std::vector<KernelListing>> ListProviderKernels(
    const std::string& provider, const std::vector<std::string>& search_paths) {
  auto p = core::LoadProvider(provider, search_paths);
  if (!p.ok()) return p.status();
  const BrtProviderApi* api = (*p)->api;
  std::vector<KernelListing> out;
  const int32_t n = api->kernel_count ? api->kernel_count() : 0;
  for (int32_t i = 0; i < n; ++i) {
    BrtKernelInfo info{};
    if (api->kernel_info(i, &info) != BRT_OK || !info.kind) continue;
    KernelListing k{info.kind, static_cast<DeviceKind>(info.device), {}};
    std::string list = info.dtypes ? info.dtypes : "";
    for (size_t start = 0; start < list.size();) {
      size_t comma = std::min(list.find(',', start), list.size());
      if (auto t = ParseDType(list.substr(start, comma - start))) k.dtypes.push_back(*t);
      start = comma + 1;
    }
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace brt

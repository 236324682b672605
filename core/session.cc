// Loading: the providers named in SessionOptions, then each function's
// values, arguments and weights (device weights uploaded once); static
// functions are specialized at once so kernel errors show at load. And the
// Session API. A Session is immutable after load and shared by threads.
#include "session_impl.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace brt {

Expected<std::shared_ptr<void>> Session::Impl::CopyTo(Device device, const std::string& what,
                                                      const void* host, size_t bytes) {
  const LoadedProvider* p = ProviderFor(device.kind);
  if (device.kind != DeviceKind::kCpu && (!p || !p->api->copy))
    return Status(StatusCode::kUnsupported, what + " lives on " + DeviceKindName(device.kind) +
                                                ", and no loaded provider can copy to it");
  auto block = core::AllocateShared(AllocatorFor(device), bytes, core::kArenaAlignment);
  if (!block)
    return Status(StatusCode::kResourceExhausted, "cannot allocate " + std::to_string(bytes) +
                                                      " bytes on " + DeviceKindName(device.kind) +
                                                      " for " + what);
  if (!bytes) return block;
  if (device.kind == DeviceKind::kCpu) {
    std::memcpy(block.get(), host, bytes);
    return block;
  }
  BrtErrorBuffer err{};
  if (const int32_t rc = p->api->copy(device.ordinal, block.get(), host, bytes, 0, nullptr, &err);
      rc != BRT_OK)
    return core::ProviderError(
        rc, "copying " + what + " to " + DeviceKindName(device.kind) + ": " + err.message);
  return block;
}

Expected<const void*> Session::Impl::UploadWeight(const std::string& name, Device device,
                                                  const void* host, size_t bytes) {
  auto block = CopyTo(device, "weight '" + name + "'", host, bytes);
  if (!block.ok()) return block.status();
  device_weights.push_back(*block);
  return static_cast<const void*>(block->get());
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

void Session::Impl::Log(LogLevel level, const std::string& message) {
  if (log) {
    log(level, message);
    return;
  }
  if (level < LogLevel::kWarning) return;
  std::lock_guard<std::mutex> lock(said_mu);
  // Many requests hitting the same situation say it once, not once each.
  if (said_on_stderr.insert(message).second) std::fprintf(stderr, "brt: %s\n", message.c_str());
}

Status Session::Impl::Init(const SessionOptions& options) {
  inspect_only = options.inspect_only;
  if (options.max_loop_iterations < 0)
    return Status(StatusCode::kInvalidArgument,
                  "SessionOptions.max_loop_iterations must be >= 0 (0: no limit), got " +
                      std::to_string(options.max_loop_iterations));
  max_loop_iterations = options.max_loop_iterations;
  if (options.max_shape_plans < 1)
    return Status(StatusCode::kInvalidArgument,
                  "SessionOptions.max_shape_plans must be >= 1, got " +
                      std::to_string(options.max_shape_plans));
  max_shape_plans = options.max_shape_plans;
  if (options.max_shape_graphs < 0)
    return Status(StatusCode::kInvalidArgument,
                  "SessionOptions.max_shape_graphs must be >= 0, got " +
                      std::to_string(options.max_shape_graphs));
  max_shape_graphs = options.max_shape_graphs;
  log = options.log;
  if (!inspect_only) {
    if (options.providers.empty())
      return Status(StatusCode::kInvalidArgument,
                    "SessionOptions.providers is empty: name at least one provider");
    for (const std::string& name : options.providers) {
      auto p = core::LoadProvider(name, options.search_paths);
      if (!p.ok()) return p.status();
      providers.push_back(*p);
    }
    BRT_RETURN_IF_ERROR(LoadCollectiveProviders(options));
    BRT_RETURN_IF_ERROR(CreateHostPool(options));
  }
  const fb::Executable& root = *exe.root;
  for (size_t i = 0; i < Len(root.functions()); ++i) {
    auto fs = std::make_unique<FunctionState>();
    BRT_RETURN_IF_ERROR(InitFunction(*root.functions()->Get(i), fs.get()));
    if (!root.functions()->Get(i)->region()) {
      infos.push_back(fs->info);
      info_functions.push_back(i);
    }
    functions.push_back(std::move(fs));
  }
  if (infos.empty() && !functions.empty())
    return Status(StatusCode::kInvalidExecutable,
                  "every function of the executable is a region: it has nothing to run");
  if (inspect_only) return Status::Ok();
  BRT_RETURN_IF_ERROR(LinkControlFlow());
  BRT_RETURN_IF_ERROR(SetUpCollectives(options));
  // Static functions are prepared now, so every kernel error shows at load;
  // in the pool, where kernels size their work for its threads.
  return InHostPool([&] {
    for (auto& fs : functions)
      if (fs->symbols.empty()) {
        auto spec = Specialize(*fs, {});
        if (!spec.ok()) return spec.status();
      }
    return Status::Ok();
  });
}

Status Session::Impl::InHostPool(const std::function<Status()>& work) {
  if (!host_pool) return work();
  struct Call {
    const std::function<Status()>& work;
    Status status;
  } call{work, Status::Ok()};
  host_pool_api->run_in_host_pool(
      host_pool.get(),
      [](void* arg) {
        Call& c = *static_cast<Call*>(arg);
        try {
          c.status = c.work();
        } catch (const std::exception& e) {  // nothing may cross the provider's C ABI
          c.status = Status(StatusCode::kInternal, e.what());
        }
      },
      &call);
  return call.status;
}

namespace {
constexpr int kMaxIntraOpThreads = 4096;
constexpr char kThreadCountHint[] = ": give a thread count from 1 to 4096, or 0 for one per CPU";

// $BRT_NUM_THREADS: the intra-op threads of Sessions that do not set theirs
// (0 when unset: one per CPU).
Expected<int> ThreadsFromEnvironment() {
  const char* text = std::getenv("BRT_NUM_THREADS");
  if (!text || !*text) return 0;
  char* end = nullptr;
  const long threads = std::strtol(text, &end, 10);
  if (*end || threads < 0 || threads > kMaxIntraOpThreads)
    return Status(StatusCode::kInvalidArgument,
                  std::string("BRT_NUM_THREADS is '") + text + "'" + kThreadCountHint);
  return static_cast<int>(threads);
}

// The CPUs this process may run on (its affinity mask; a container's quota
// is not seen).
int UsableCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}
}  // namespace

Status Session::Impl::CreateHostPool(const SessionOptions& options) {
  if (options.intra_op_threads < 0 || options.intra_op_threads > kMaxIntraOpThreads)
    return Status(StatusCode::kInvalidArgument, "SessionOptions.intra_op_threads is " +
                                                    std::to_string(options.intra_op_threads) +
                                                    kThreadCountHint);
  if (options.linger_microseconds < 0 || options.linger_microseconds > BRT_HOST_POOL_MAX_LINGER_US)
    return Status(StatusCode::kInvalidArgument,
                  "SessionOptions.linger_microseconds is " +
                      std::to_string(options.linger_microseconds) + ": give 0 (off) to " +
                      std::to_string(BRT_HOST_POOL_MAX_LINGER_US) + " microseconds");
  for (const auto& p : providers) {
    const BrtProviderApi* api = p->api;
    if (!BRT_STRUCT_HAS(BrtProviderApi, api, run_in_host_pool) || !api->create_host_pool ||
        !api->destroy_host_pool || !api->run_in_host_pool)
      continue;
    BrtHostPoolConfig config{sizeof(BrtHostPoolConfig), options.intra_op_threads,
                             options.allow_spinning ? 1 : 0, 0};
    if (config.threads == 0) {
      auto from_env = ThreadsFromEnvironment();
      if (!from_env.ok()) return from_env.status();
      config.threads = *from_env ? *from_env : UsableCpus();
    }
    // With one thread no worker is there to linger.
    if (config.spin && config.threads > 1) config.linger_us = options.linger_microseconds;
    void* pool = nullptr;
    BrtErrorBuffer error{};
    if (const int32_t rc = api->create_host_pool(&config, &pool, &error); rc != BRT_OK)
      return core::ProviderError(
          rc, "provider '" + p->name() + "': cannot make its thread pool: " + error.message);
    host_pool = std::shared_ptr<void>(pool, [api](void* q) { api->destroy_host_pool(q); });
    host_pool_api = api;
    host_threads = config.threads;
    host_spinning = options.allow_spinning;
    host_linger_us = config.linger_us;
    return Status::Ok();
  }
  return Status::Ok();
}

Status Session::Impl::InitFunction(const fb::Function& fn, FunctionState* fs) {
  fs->fn = &fn;
  fs->info.name = Str(fn.name());
  std::string where = "function '" + fs->info.name + "'";
  for (size_t m = 0; m < Len(fn.mesh()); ++m)
    fs->info.mesh.push_back({Str(fn.mesh()->Get(m)->name()), fn.mesh()->Get(m)->size()});
  for (size_t v = 0; v < Len(fn.values()); ++v) {
    const fb::Value* val = fn.values()->Get(v);
    fs->values.push_back({core::ToDType(val->dtype()), core::ValueDims(*val),
                          Device{core::ToDeviceKind(val->device()), val->device_ordinal()}});
  }
  // Each symbolic dimension's expression is parsed once; a symbol is fixed
  // by an input (or state) dimension that is that symbol alone.
  std::vector<bool> symbol_bound;
  auto note_symbols = [&](const std::vector<Dim>& dims, bool from_input) -> Status {
    for (const Dim& d : dims) {
      if (d.is_static()) continue;
      auto it = fs->dim_exprs.find(d.symbol);
      if (it == fs->dim_exprs.end()) {
        auto parsed = core::DimExpr::Parse(d.symbol, &fs->symbols);
        if (!parsed.ok())
          return Status(parsed.status().code(), where + ": " + parsed.status().message());
        it = fs->dim_exprs.emplace(d.symbol, std::move(*parsed)).first;
        symbol_bound.resize(fs->symbols.size(), false);
      }
      if (from_input && it->second.AsSymbol() >= 0) symbol_bound[it->second.AsSymbol()] = true;
    }
    return Status::Ok();
  };
  for (size_t a = 0; a < Len(fn.arguments()); ++a) {
    const fb::Argument* arg = fn.arguments()->Get(a);
    const ValueMeta& vm = fs->values[arg->value()];
    ArgumentInfo info{Str(arg->name()),
                      static_cast<ArgRole>(arg->role()),
                      vm.dtype,
                      vm.dims,
                      vm.device,
                      arg->alias_argument(),
                      {}};
    for (size_t d = 0; d < Len(arg->sharding()); ++d)
      info.sharding.push_back(arg->sharding()->Get(d)->str());
    const void* weight = nullptr;
    const void* host_weight = nullptr;
    if (info.role == ArgRole::kWeight) {
      const fb::WeightSegment* segment = exe.root->weights()->Get(arg->weight());
      weight = host_weight = exe.bytes.data + segment->offset();
      if (info.device.kind != DeviceKind::kCpu && !inspect_only) {
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
    BRT_RETURN_IF_ERROR(
        note_symbols(info.shape, info.role == ArgRole::kInput || info.role == ArgRole::kState));
    fs->weight_data.push_back(weight);
    fs->host_weight_data.push_back(host_weight);
    fs->info.arguments.push_back(std::move(info));
  }
  for (const ValueMeta& vm : fs->values) BRT_RETURN_IF_ERROR(note_symbols(vm.dims, false));
  for (size_t c = 0; c < Len(fn.constraints()); ++c) {
    auto constraint = core::DimConstraint::Parse(Str(fn.constraints()->Get(c)), &fs->symbols);
    if (!constraint.ok())
      return Status(constraint.status().code(), where + ": " + constraint.status().message());
    fs->constraints.push_back(std::move(*constraint));
    symbol_bound.resize(fs->symbols.size(), false);
  }
  fs->constant_data.assign(fs->values.size(), nullptr);
  for (size_t a = 0; a < fs->host_weight_data.size(); ++a)
    if (fs->host_weight_data[a])
      fs->constant_data[fn.arguments()->Get(a)->value()] = fs->host_weight_data[a];
  for (size_t s = 0; s < fs->symbols.size(); ++s)
    if (!symbol_bound[s])
      return Status(StatusCode::kInvalidExecutable, where + ": symbolic dimension '" +
                                                        fs->symbols[s] +
                                                        "' is not alone in any input's "
                                                        "dimensions, so it cannot be determined "
                                                        "at run time");
  fs->use_file_plan = fs->symbols.empty() && fn.plan() != nullptr;
  return inspect_only ? Status::Ok() : ResolveOps(fn, fs, where);
}

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

int Session::intra_op_threads() const { return impl_->host_pool ? impl_->host_threads : 0; }
bool Session::allow_spinning() const { return impl_->host_pool && impl_->host_spinning; }
int Session::linger_microseconds() const { return impl_->host_pool ? impl_->host_linger_us : 0; }

std::vector<std::string> Session::provider_names() const {
  std::vector<std::string> names;
  for (const auto& p : impl_->providers) names.push_back(p->name());
  return names;
}

Expected<std::unique_ptr<RequestContext>> Session::NewRequest(std::string_view function) const {
  auto info = this->function(function);
  if (!info.ok()) return info.status();
  if (impl_->inspect_only)
    return Status(StatusCode::kFailedPrecondition,
                  "this Session was loaded with inspect_only: it describes the executable and "
                  "runs nothing; load it again without inspect_only to run '" +
                      (*info)->name + "'");
  size_t index = *info - impl_->infos.data();
  auto ctx = std::make_unique<RequestContext::Impl>();
  ctx->session = shared_from_this();
  ctx->s = impl_.get();
  ctx->fs = impl_->functions[impl_->info_functions[index]].get();
  ctx->bindings.resize((*info)->arguments.size());
  ctx->outputs.resize((*info)->arguments.size());
  return std::unique_ptr<RequestContext>(new RequestContext(std::move(ctx)));
}

Expected<ShapePlanStats> Session::shape_plan_stats(std::string_view function) const {
  auto info = this->function(function);
  if (!info.ok()) return info.status();
  FunctionState& fs = *impl_->functions[impl_->info_functions[*info - impl_->infos.data()]];
  std::lock_guard<std::mutex> lock(fs.mu);
  ShapePlanStats stats = fs.plan_stats;
  stats.hits = fs.plan_hits.load(std::memory_order_relaxed);
  stats.plans = static_cast<int64_t>(fs.specializations.size());
  return stats;
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

// libbrt's private view of a loaded Session and a RequestContext, shared by
// the files of the run pipeline, one per stage:
//   session.cc          load: providers, functions, arguments, weights; the
//                       Session API
//   resolve.cc          each op to a provider's kernel (at load)
//   specialize.cc       shapes for bound symbolic dims, prepared kernels and
//                       the memory plan; binding a context's buffers to them
//   dispatch.cc         the per-op dispatch table and the hot loop (eager,
//                       profiled, or a recorded graph)
//   streams.cc          work queues, cross-stream events, staged transfers
//   request_context.cc  the RequestContext API: bind, run, outputs
// Ownership: a Session::Impl owns its FunctionStates, which own their
// Specializations (shared with the contexts using them); a
// RequestContext::Impl owns its queues, events, arenas and kernel instances.
// Threads: a Session::Impl is immutable after Init except the specialization
// cache (FunctionState::mu) and the allocator map (allocators_mu); a
// RequestContext::Impl is used by one thread at a time (its RunAsync thread
// while a run is in flight).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "allocator.h"
#include "brt/session.h"
#include "dim_expr.h"
#include "format.h"
#include "plugin_loader.h"
#include "provider_status.h"
#include "work_queue.h"

namespace brt {

using core::LoadedProvider;

inline std::string Str(const flatbuffers::String* s) {
  return s ? std::string(s->c_str(), s->size()) : "";
}

template <typename T>
size_t Len(const flatbuffers::Vector<T>* v) {
  return v ? v->size() : 0;
}

struct ValueMeta {
  DType dtype;
  std::vector<Dim> dims;
  Device device;
};

struct FunctionState;
struct ControlFlowOp;

struct ResolvedOp {
  std::string kind;
  const LoadedProvider* provider = nullptr;
  BrtKernel kernel{};
  std::vector<uint32_t> operands, results;
  std::vector<BrtAttr> attrs;             // point into the executable's bytes
  const fb::Kernel* generated = nullptr;  // the kernel its "kernel" attribute names
  int stream = 0;                         // device ops on other streams may overlap it
  bool collective = false;                // the registry's kCollective
  void* comm = nullptr;                   // a collective's group communicator
  int comm_rank = 0, comm_size = 1;
  // A while's or case's regions: run by the core, not by a provider
  // (control_flow.cc). Null for other ops.
  std::shared_ptr<ControlFlowOp> control;
};

// A while or case op: the region functions it runs, checked against its
// operands and results at load (Session::Impl::LinkControlFlow).
struct ControlFlowOp {
  Session::Impl* s = nullptr;
  bool is_while = false;
  std::string where;  // "function 'main' op #3 'while'"
  std::vector<FunctionState*> regions;
  std::vector<Device> devices;  // of its operands, then its results
};

// The core's stand-in provider for control-flow ops: they run on the host
// thread (no queue), whatever device their values live on.
const core::LoadedProvider* ControlFlowProvider();
bool IsControlFlowKind(const std::string& kind);
// The iterations the last run of a control-flow op's instance took (a
// while's trips, a case's branch), for the profile.
int64_t ControlFlowIterations(const void* instance);

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
  // Every symbolic dimension's expression by its text (a symbol alone is
  // one too), and the function's shape constraints (format 1.6).
  std::map<std::string, core::DimExpr, std::less<>> dim_exprs;
  std::vector<core::DimConstraint> constraints;
  bool use_file_plan = false;
  std::vector<const void*> weight_data;       // per argument; null unless a weight
  std::vector<const void*> host_weight_data;  // the same, when it is in host memory
  std::vector<const void*> constant_data;     // per value: a weight's bytes, else null

  std::mutex mu;  // guards the plans and their statistics
  struct Plan {
    std::shared_ptr<const Specialization> spec;
    int64_t last_use = 0;
  };
  std::map<std::vector<int64_t>, Plan> specializations;
  int64_t uses = 0;                   // the plans' clock, for least-recently-used eviction
  ShapePlanStats plan_stats;          // but its hits:
  std::atomic<int64_t> plan_hits{0};  // counted without the lock, per run
};

// The communicators of one collectives provider: the world, and one per
// distinct replica-group set (keyed by its flattened groups and group size).
struct Communicators {
  const LoadedProvider* provider = nullptr;
  void* world = nullptr;
  std::map<std::vector<int64_t>, void*> groups;
  ~Communicators();
};

struct Session::Impl {
  core::VerifiedExecutable exe;
  std::string producer;
  std::vector<std::shared_ptr<const LoadedProvider>> providers;
  int rank = 0, world_size = 1;
  bool inspect_only = false;        // SessionOptions::inspect_only
  int64_t max_loop_iterations = 0;  // SessionOptions::max_loop_iterations
  int max_shape_plans = 32;         // SessionOptions::max_shape_plans
  int max_shape_graphs = 8;         // SessionOptions::max_shape_graphs
  // Declared before `functions`: prepared collectives hold communicators,
  // so the communicators go last.
  std::vector<std::unique_ptr<Communicators>> comms;
  std::vector<std::unique_ptr<FunctionState>> functions;
  std::vector<FunctionInfo> infos;     // the functions callers may run (not regions)
  std::vector<size_t> info_functions;  // per info: its index in `functions`
  std::shared_ptr<core::Allocator> host_allocator = std::make_shared<core::HostAllocator>();
  std::mutex allocators_mu;
  std::map<std::pair<int, int>, std::shared_ptr<core::Allocator>> device_allocators;
  std::vector<std::shared_ptr<void>> device_weights;  // uploaded once at load
  // The pool host kernels share out their work on (SessionOptions'
  // intra_op_threads), made by the first provider that has one; requests
  // run their ops inside it. Declared after the providers: it goes first.
  std::shared_ptr<void> host_pool;
  const BrtProviderApi* host_pool_api = nullptr;
  int host_threads = 0;
  bool host_spinning = false;
  int host_linger_us = 0;
  LogCallback log;  // SessionOptions::log; unset: stderr
  std::mutex said_mu;
  std::set<std::string> said_on_stderr;  // warnings already printed, each once

  // A diagnostic, to SessionOptions::log or else (warnings and errors) to
  // stderr once per distinct message.
  void Log(LogLevel level, const std::string& message);

  Status Init(const SessionOptions& options);
  // collectives.cc: the collectives providers a program with collectives
  // needs, loaded when SessionOptions does not name them.
  Status LoadCollectiveProviders(const SessionOptions& options);
  // The provider whose collectives serve `device` (BRT_DEVICE_*): a loaded
  // one, else the first plugin in the search path that declares it, loaded.
  Expected<const LoadedProvider*> CollectivesProviderFor(int32_t device,
                                                         const SessionOptions& options);
  Status CreateHostPool(const SessionOptions& options);
  // work() on the calling thread, inside the host pool when there is one.
  Status InHostPool(const std::function<Status()>& work);
  // collectives.cc: rank discovery, then each collectives provider's world
  // communicator and each op's group communicator, in program order.
  Status SetUpCollectives(const SessionOptions& options);
  Expected<std::vector<uint8_t>> ShareBootstrapBlob(const LoadedProvider& needs,
                                                    const BrtCommConfig& config,
                                                    const SessionOptions& options);
  Status InitFunction(const fb::Function& fn, FunctionState* fs);
  // control_flow.cc: once every function is resolved, each control-flow
  // op's regions found and checked against its operands and results.
  Status LinkControlFlow();
  // Resolves each op of fn to the first provider whose table takes it.
  Status ResolveOps(const fb::Function& fn, FunctionState* fs, const std::string& where);
  Expected<std::shared_ptr<const Specialization>> Specialize(FunctionState& fs,
                                                             const std::vector<int64_t>& symbols);
  std::shared_ptr<core::Allocator> AllocatorFor(Device device);
  // The first loaded provider whose kernels run on this device kind.
  const LoadedProvider* ProviderFor(DeviceKind kind) const {
    for (const auto& p : providers)
      if (p->api->device_kind == static_cast<int32_t>(kind)) return p.get();
    return nullptr;
  }
  // A copy of `bytes` host bytes in fresh memory on `device` (host memory
  // for the CPU); `what` names it in errors.
  Expected<std::shared_ptr<void>> CopyTo(Device device, const std::string& what, const void* host,
                                         size_t bytes);
  Expected<const void*> UploadWeight(const std::string& name, Device device, const void* host,
                                     size_t bytes);
};

struct QueueSlot {
  const LoadedProvider* provider;
  void* queue;
  int stream = 0;
};

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
    bool sync_before;  // wait for every queue first (a host op after queued work it touches)
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
  // Whether ops i and j touch the same memory with one of them writing it:
  // their values' arena ranges overlap (arenas reuse bytes).
  bool Conflict(size_t i, size_t j) const;
  // Whether host op i must wait for queued op j: they conflict, or both
  // touch memory outside the arenas (bindings, weights, state written in
  // place), which value ids alone cannot tell apart.
  bool HostWaits(size_t i, size_t j) const;
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
    size_t bytes = 0;  // their capacity: they grow, never shrink
  };
  std::vector<StagingBuffers> staging;  // per argument
  Expected<void*> Staging(size_t arg, size_t bytes);
  // The argument's page-locked bounce buffer, or null without one.
  void* Pinned(size_t arg);
  Status AddTransfer(std::vector<Transfer>& list, Device dst_device, void* dst, Device src_device,
                     const void* src, size_t bytes);
  Status RunTransfers(const std::vector<Transfer>& list);
  // Copies go through the first provider of their device; the device's other
  // providers (nccl beside cuda) run ops on queues of their own, which no
  // provider's events order against those copies. The provider of the first
  // device op (it may read staged inputs) and the one whose queues hold the
  // last ops the host has not waited for (they may write what is copied
  // back), set by BuildDispatch; null when there are none.
  const LoadedProvider* first_device_provider = nullptr;
  const LoadedProvider* last_device_provider = nullptr;
  // The host waits for the copies in `list` before provider `ops` runs (or,
  // `copies_first` false, for `ops`'s queues before the copies) where the
  // copies go through another provider.
  Status OrderCopies(const std::vector<Transfer>& list, const LoadedProvider* ops,
                     bool copies_first);
  // Waits for every queue, or only for those of provider `only`.
  Status Synchronize(const LoadedProvider* only = nullptr);

  // CUDA graphs: the recorded ops and the buffer addresses they were recorded with.
  bool graphs_enabled = true;
  QueueSlot* graph_queue = nullptr;  // set when every op can be recorded on one queue
  void* graph = nullptr;
  std::vector<void*> graph_buffers;
  bool replayed = false;
  ShapeGraphStats graph_stats;
  // Shapes of a symbolic function this context ran before and left, each
  // with what its graph replays against (its plan, arenas and kernel
  // instances; its graph once recorded), the least recently left dropped
  // first beyond SessionOptions::max_shape_graphs. Coming back to one
  // replays its graph instead of recording again.
  struct ShapeGraph {
    std::vector<int64_t> key;
    std::shared_ptr<const Specialization> spec;
    std::vector<std::shared_ptr<void>> arenas;
    std::vector<void*> instances;
    const BrtProviderApi* api = nullptr;  // the graph's
    void* graph = nullptr;
    std::vector<void*> graph_buffers;
    uint64_t left = 0;  // when the context left it, for least recently used
  };
  std::vector<ShapeGraph> shape_graphs;
  uint64_t shape_changes = 0;
  // The current shape's state into shape_graphs when its ops can be
  // recorded and it has run once (else released), leaving none current.
  void SetShapeAside();
  // The kept state of `key`'s shape, taken out of shape_graphs; nullopt if none.
  std::optional<ShapeGraph> TakeShapeGraph(const std::vector<int64_t>& key);
  void DropShapeGraph(ShapeGraph& g);
  void DropShapeGraphs();
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
    (void)Synchronize();  // no queued kernel may outlive its instance or arena
    DropGraph();
    DropShapeGraphs();
    DropEvents();
    ReleaseInstances();
    for (auto& q : queues)
      if (q->queue) q->provider->api->destroy_queue(q->queue);
  }

  Expected<size_t> Find(ArgRef ref) const;
  Status CheckTensor(size_t arg, const Tensor& t) const;
  // A copy of a host tensor in memory the runtime owns on `device`.
  Expected<Tensor> OwnedCopy(size_t arg, const Tensor& host, Device device) const;
  // A device tensor copied to the host (a host tensor as it is).
  Expected<Tensor> OnHost(size_t arg, const Tensor& t) const;
  // Fills symbol_values from the bound arguments (reusing its storage, so a
  // run does not allocate); from argument `only` alone when it is given.
  Status ResolveSymbols(bool require_all, int only = -1);
  std::vector<int64_t> symbol_values;
  std::vector<size_t> symbol_source;
  // The bound arguments' dimensions that are expressions, against the
  // values their symbols have.
  Status CheckExpressionDims() const;
  Status PrepareRun();
  // The current shape's arenas and kernel instances, new.
  Status AllocateShape();
  // Runs the request, inside the Session's host pool when it has one.
  Status Execute();
  Status ExecuteHere();
  void ReleaseInstances();
  std::string ArgName(size_t arg) const {
    return "'" + fs->info.arguments[arg].name + "' (argument " + std::to_string(arg) + ")";
  }
};

}  // namespace brt
